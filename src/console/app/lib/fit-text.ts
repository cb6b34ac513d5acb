/**
 * A label cut to a width: `name + suffix` when it fits, else the longest start of `name` with an ellipsis, then the
 * suffix (a count stays readable when a long URL is cut). `measure` gives a text's width in the label's font.
 */
export function fitText(name: string, suffix: string, maxWidth: number, measure: (text: string) => number): string {
  if (measure(name + suffix) <= maxWidth) return name + suffix;
  // Longest prefix that fits, by bisection (widths grow with the prefix).
  let lo = 0;
  let hi = name.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(`${name.slice(0, mid)}…${suffix}`) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  if (lo > 0) return `${name.slice(0, lo)}…${suffix}`;
  return measure(`…${suffix}`) <= maxWidth ? `…${suffix}` : measure('…') <= maxWidth ? '…' : '';
}
