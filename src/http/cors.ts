/**
 * Which browser origins may read answers. The public endpoints (capture, flags, decide, remote config) are called
 * from any site that embeds posthog-js, so they mirror every Origin and allow credentials, as PostHog's do. The
 * private API answers with `Access-Control-Allow-Origin` (and credentials) only to the console's own origins: the
 * server's own origin and those configured in QUILL_CONSOLE_ORIGIN. Other sites get no CORS grant at all, so a
 * page elsewhere cannot read private answers even if the browser attached credentials.
 */

/** `scheme://host[:port]` in the form browsers send in `Origin` (lower case, no trailing slash, no path). */
export function normalizeOrigin(origin: string): string | null {
  try {
    const url = new URL(origin.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.origin;
  } catch {
    return null;
  }
}

/** The configured console origins (comma-separated), normalized; an entry that is not an origin is an error. */
export function parseConsoleOrigins(list: string | null): ReadonlySet<string> {
  const origins = new Set<string>();
  for (const raw of (list ?? '').split(',')) {
    if (raw.trim() === '') continue;
    const origin = normalizeOrigin(raw);
    if (!origin) throw new Error(`QUILL_CONSOLE_ORIGIN: "${raw.trim()}" is not an http(s) origin`);
    origins.add(origin);
  }
  return origins;
}

/** May a page at `origin` read a private answer? (`ownOrigin`: this server as the request addressed it.) */
export function privateOriginAllowed(origin: string, ownOrigin: string, consoleOrigins: ReadonlySet<string>): boolean {
  const normalized = normalizeOrigin(origin);
  if (!normalized) return false;
  return normalized === normalizeOrigin(ownOrigin) || consoleOrigins.has(normalized);
}
