/**
 * Date ranges in words, as the insight pages offer them and dashboard tiles show them: `-7d` is "Last 7 days",
 * two dates are "2024-03-01 – 2024-03-10". A missing date_from is the analyses' default, the last 7 days.
 */
export const DATE_FROM_CHOICES: [string, string][] = [
  ['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-14d', 'Last 14 days'], ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days'],
  ['mStart', 'This month'], ['-1y', 'Last year'], ['all', 'All time'],
];

const UNITS: Record<string, [string, string]> = { h: ['hour', 'hours'], d: ['day', 'days'], w: ['week', 'weeks'], m: ['month', 'months'], y: ['year', 'years'], q: ['quarter', 'quarters'] };
const STARTS: Record<string, string> = { dStart: 'Today', wStart: 'This week', mStart: 'This month', qStart: 'This quarter', yStart: 'This year' };

/** `-7d`, `mStart`, `all` or a date, in words. */
function fromText(from: string): string {
  const known = DATE_FROM_CHOICES.find(([v]) => v === from);
  if (known) return known[1];
  if (STARTS[from]) return STARTS[from];
  const rel = /^-(\d+)([hdwmyq])$/.exec(from);
  if (rel) {
    const n = Number(rel[1]);
    const [one, many] = UNITS[rel[2]!]!;
    return n === 1 ? `Last ${one}` : `Last ${n} ${many}`;
  }
  return from;
}

const dayOf = (v: string) => (/^\d{4}-\d{2}-\d{2}T00:00:00(\.0+)?(Z|[+-]00:00)?$/.test(v) ? v.slice(0, 10) : v);

export function dateRangeText(from: string | null | undefined, to: string | null | undefined): string {
  const f = from ? dayOf(from) : null;
  const t = to ? dayOf(to) : null;
  if (!f) return t ? `Last 7 days until ${t}` : 'Last 7 days';
  const relative = f === 'all' || !/^\d{4}-/.test(f);
  if (!t) return relative ? fromText(f) : `From ${f}`;
  return relative ? `${fromText(f)} until ${t}` : `${f} – ${t}`;
}
