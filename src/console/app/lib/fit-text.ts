/**
 * A label cut to a width: `name + suffix` when it fits, else the longest start of `name` with an ellipsis, then the
 * suffix (a count stays readable when a long URL is cut). When that would leave fewer than four characters of the
 * name, the name goes first and the suffix is dropped (the caller's tooltip still has both). `measure` gives a
 * text's width in the label's font.
 */
const MIN_KEPT = 4;

export function fitText(name: string, suffix: string, maxWidth: number, measure: (text: string) => number): string {
  if (measure(name + suffix) <= maxWidth) return name + suffix;
  const kept = longestPrefix(name, suffix, maxWidth, measure);
  if (kept >= Math.min(MIN_KEPT, name.length)) return `${name.slice(0, kept)}…${suffix}`;
  if (measure(name) <= maxWidth) return name;
  const alone = longestPrefix(name, '', maxWidth, measure);
  if (alone > 0) return `${name.slice(0, alone)}…`;
  return measure('…') <= maxWidth ? '…' : '';
}

/** The longest start of `name` that fits with an ellipsis and `suffix`, by bisection (widths grow with it). */
function longestPrefix(name: string, suffix: string, maxWidth: number, measure: (text: string) => number): number {
  let lo = 0;
  let hi = name.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(`${name.slice(0, mid)}…${suffix}`) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
