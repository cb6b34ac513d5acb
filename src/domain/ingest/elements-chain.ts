import type { ElementRecord } from './types.js';

/**
 * §5.6 autocapture `elements_chain`: `;`-joined elements (clicked element first, then ancestors), each
 * `tag.classA.classB:` followed by attributes sorted by key, rendered `key="value"` with no separator, `"` escaped
 * as `\"`. Keys are sorted by UTF-16 code unit (Django's `sorted()` order; PostHog's Node pipeline used
 * `localeCompare`, which agrees for the lower-case ASCII names browsers produce).
 */

/** posthog-js limits copied from PostHog's extractor: text 400 chars, href 2048 chars. */
const MAX_TEXT = 400;
const MAX_HREF = 2048;

function str(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

function escapeQuotes(s: string): string {
  return s.includes('"') ? s.replaceAll('"', '\\"') : s;
}

function classesOf(v: unknown): string[] {
  if (typeof v === 'string') return v.split(' ').filter((c) => c.length > 0);
  if (Array.isArray(v)) return v.filter((c): c is string => typeof c === 'string' && c.length > 0);
  return [];
}

/** posthog-js `$elements` item → element record (PostHog's `extractElements`). */
function recordFromElement(el: Record<string, unknown>, order: number): ElementRecord {
  const attributes: Record<string, string> = {};
  for (const key in el) {
    if (key.startsWith('attr__')) {
      const v = el[key];
      const s = Array.isArray(v) ? v.join(' ') : str(v);
      if (s !== null) attributes[key] = s;
    }
  }
  const classes = classesOf(el['attr__class']);
  const text = str(el['$el_text']);
  const href = str(el['attr__href']);
  return {
    text: text === null ? null : text.slice(0, MAX_TEXT),
    tag_name: str(el['tag_name']),
    attr_class: classes.length > 0 ? classes : null,
    href: href === null ? null : href.slice(0, MAX_HREF),
    attr_id: str(el['attr__id']),
    nth_child: numberOrNull(el['nth_child']),
    nth_of_type: numberOrNull(el['nth_of_type']),
    attributes,
    order,
  };
}

function elementToString(el: ElementRecord): string {
  let out = el.tag_name ?? '';
  if (el.attr_class !== null) {
    for (const c of [...el.attr_class].sort()) out += '.' + c.replaceAll('"', '');
  }

  const attrs: [string, string][] = [];
  if (el.text) attrs.push(['text', el.text]);
  attrs.push(['nth-child', String(el.nth_child ?? 0)]);
  attrs.push(['nth-of-type', String(el.nth_of_type ?? 0)]);
  if (el.href) attrs.push(['href', el.href]);
  if (el.attr_id) attrs.push(['attr_id', el.attr_id]);
  for (const key in el.attributes) attrs.push([key, el.attributes[key]!]);
  attrs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

  out += ':';
  for (const [k, v] of attrs) out += escapeQuotes(k) + '="' + escapeQuotes(v) + '"';
  return out;
}

function numberOrNull(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** Build the chain from posthog-js `$elements` (array of objects); anything else gives ''. */
export function elementsChainFromElements(elements: unknown): string {
  if (!Array.isArray(elements) || elements.length === 0) return '';
  const records: ElementRecord[] = [];
  for (const el of elements) {
    if (el !== null && typeof el === 'object' && !Array.isArray(el)) {
      records.push(recordFromElement(el as Record<string, unknown>, records.length));
    }
  }
  return elementsChainFromRecords(records);
}

/** Build the chain from element records, in array order (inverse of {@link parseElementsChain}). */
export function elementsChainFromRecords(records: readonly ElementRecord[]): string {
  return records.map(elementToString).join(';');
}

// --- parsing ------------------------------------------------------------------------------------------------

function isKeyChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x5f
  );
}

/** Splits on `;` (and, as PostHog's splitter does, unquoted whitespace) outside double-quoted values. */
function splitElements(chain: string): string[] {
  const out: string[] = [];
  let start = -1;
  let inQuote = false;
  for (let i = 0; i < chain.length; i++) {
    const c = chain.charCodeAt(i);
    if (inQuote) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inQuote = false;
      continue;
    }
    if (c === 0x3b || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      if (start >= 0) out.push(chain.slice(start, i));
      start = -1;
      continue;
    }
    if (start < 0) start = i;
    if (c === 0x22) inQuote = true;
  }
  if (start >= 0) out.push(chain.slice(start));
  return out;
}

/** Index of the `:` that starts the attribute part: the first one followed by `[A-Za-z0-9_-]*=`; -1 if none. */
function attributesStart(el: string): number {
  for (let i = el.indexOf(':'); i >= 0; i = el.indexOf(':', i + 1)) {
    let j = i + 1;
    while (j < el.length && isKeyChar(el.charCodeAt(j))) j++;
    if (j < el.length && el.charCodeAt(j) === 0x3d) return i;
  }
  return -1;
}

function parseAttributes(s: string, into: (key: string, value: string) => void): void {
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf('="', i);
    if (eq < 0) return;
    const key = s.slice(i, eq).replaceAll('\\"', '"');
    let j = eq + 2;
    let value = '';
    let segment = j;
    for (; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c === 0x5c && s.charCodeAt(j + 1) === 0x22) {
        value += s.slice(segment, j) + '"';
        j++;
        segment = j + 1;
      } else if (c === 0x22) {
        break;
      }
    }
    value += s.slice(segment, j);
    into(key, value);
    i = j + 1;
  }
}

function toInt(v: string): number | null {
  const n = parseInt(v, 10);
  return Number.isNaN(n) ? null : n;
}

/** Parse a stored chain back into element records (the `elements` field of the events API, §5.5). */
export function parseElementsChain(chain: string): ElementRecord[] {
  if (typeof chain !== 'string' || chain.length === 0) return [];
  return splitElements(chain).map((el, order) => {
    const rec: ElementRecord = {
      text: null,
      tag_name: null,
      attr_class: null,
      href: null,
      attr_id: null,
      nth_child: null,
      nth_of_type: null,
      attributes: {},
      order,
    };
    const colon = attributesStart(el);
    const head = colon < 0 ? el : el.slice(0, colon);
    if (head.length > 0) {
      const dot = head.indexOf('.');
      const tag = dot < 0 ? head : head.slice(0, dot);
      rec.tag_name = tag.length > 0 ? tag : null;
      if (dot >= 0) {
        const classes = head.slice(dot + 1).split('.').filter((c) => c.length > 0);
        if (classes.length > 0) rec.attr_class = classes;
      }
    }
    if (colon >= 0) {
      parseAttributes(el.slice(colon + 1), (key, value) => {
        switch (key) {
          case 'href':
            rec.href = value;
            break;
          case 'nth-child':
            rec.nth_child = toInt(value);
            break;
          case 'nth-of-type':
            rec.nth_of_type = toInt(value);
            break;
          case 'text':
            rec.text = value;
            break;
          case 'attr_id':
            rec.attr_id = value;
            break;
          default:
            if (key) rec.attributes[key] = value;
        }
      });
    }
    return rec;
  });
}
