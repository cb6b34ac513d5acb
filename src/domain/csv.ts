/**
 * §5.7 CSV export (`?format=csv` on persons and events), shaped like PostHog's renderer
 * (djangorestframework-csv on Python's csv module):
 * - each row is flattened: nested object keys joined with `.` (`properties.email`), list items indexed
 *   (`distinct_ids.0`); empty objects/lists contribute no column;
 * - header = sorted union of all flattened keys, first line; rows follow in input order;
 * - CRLF after every line (including the last); no rows → '' (not even a header);
 * - null/undefined → empty cell; booleans as Python prints them (`True`/`False`);
 * - minimal quoting: a cell containing `,`, `"`, CR or LF is wrapped in quotes with `"` doubled.
 */
export function toCsv(rows: object[]): string {
  if (rows.length === 0) return '';
  const flat: Map<string, unknown>[] = [];
  const keys = new Set<string>();
  for (const row of rows) {
    const cells = new Map<string, unknown>();
    flatten(row, '', cells);
    for (const k of cells.keys()) keys.add(k);
    flat.push(cells);
  }
  // Code-unit order, like Python's sorted() for BMP text.
  const header = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  let out = header.map(quote).join(',') + '\r\n';
  for (const cells of flat) {
    let line = '';
    for (let i = 0; i < header.length; i++) {
      if (i > 0) line += ',';
      line += quote(cellText(cells.get(header[i]!)));
    }
    out += line + '\r\n';
  }
  return out;
}

function isContainer(v: unknown): v is object {
  return v !== null && typeof v === 'object' && !(v instanceof Date);
}

function flatten(value: object, prefix: string, into: Map<string, unknown>): void {
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value);
  for (const [key, v] of entries) {
    const path = prefix === '' ? key : prefix + '.' + key;
    if (isContainer(v)) flatten(v, path, into);
    else into.set(path, v);
  }
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v instanceof Date) return v.toISOString();
  return String(v);
}

function quote(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2c || c === 0x22 || c === 0x0a || c === 0x0d) return '"' + s.replaceAll('"', '""') + '"';
  }
  return s;
}
