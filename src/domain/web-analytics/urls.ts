/**
 * The URL functions web analytics uses, with ClickHouse's meaning (PostHog computes them there): `path` (the path
 * of a URL, without query string or fragment), `domain`, `cutQueryStringAndFragment` and
 * `cutToFirstSignificantSubdomain`.
 */

const SCHEME_AND_HOST = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/;

/** `path(url)`: `https://a.com/x/y?q#f` → `/x/y`; a URL without a path → `` (ClickHouse's empty string). */
export function pathOf(url: string): string {
  const m = SCHEME_AND_HOST.exec(url);
  const rest = m ? url.slice(m[0].length) : url;
  const cut = rest.search(/[?#]/);
  return cut === -1 ? rest : rest.slice(0, cut);
}

/** `domain(url)`: the host without port or credentials; `` when the text has no scheme and host. */
export function domainOf(url: string): string {
  const m = SCHEME_AND_HOST.exec(url);
  if (!m) return '';
  const host = m[1]!.replace(/^[^@]*@/, '');
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '');
}

/** `cutQueryStringAndFragment(url)`. */
export function withoutQueryAndFragment(url: string): string {
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}

/**
 * Second-level labels that do not make a domain on their own (`co.uk`, `com.au`): ClickHouse's default list of
 * insignificant ones.
 */
const INSIGNIFICANT = new Set(['com', 'net', 'org', 'co', 'gov', 'edu', 'ac', 'or', 'ne', 'go', 'mil', 'int', 'biz', 'info', 'gob', 'nic']);

/** `cutToFirstSignificantSubdomain(host)`: `www.google.co.uk` → `google.co.uk`; a single label → ``. */
export function firstSignificantDomain(host: string): string {
  const labels = host.split('.');
  if (labels.length < 2 || labels.some((l) => l === '')) return '';
  const keep = labels.length >= 3 && INSIGNIFICANT.has(labels[labels.length - 2]!) ? 3 : 2;
  return labels.slice(-keep).join('.');
}
