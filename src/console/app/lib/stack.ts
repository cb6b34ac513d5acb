/**
 * Stacked bars: each bucket's positive values stacked upwards and negative ones downwards (lifecycle's dormant
 * users), series in order; y0/y1 are where each series' bar starts and ends.
 */
export function stackOf(series: { data: (number | null)[] }[]): { y0: number[][]; y1: number[][]; min: number; max: number } {
  const n = series[0]?.data.length ?? 0;
  const up = new Array<number>(n).fill(0);
  const down = new Array<number>(n).fill(0);
  const y0: number[][] = [];
  const y1: number[][] = [];
  for (const s of series) {
    const from: number[] = [];
    const to: number[] = [];
    for (let i = 0; i < n; i++) {
      const v = s.data[i] ?? 0;
      const base = v >= 0 ? up[i]! : down[i]!;
      from.push(base);
      to.push(base + v);
      if (v >= 0) up[i] = base + v;
      else down[i] = base + v;
    }
    y0.push(from);
    y1.push(to);
  }
  return { y0, y1, min: Math.min(0, ...down), max: Math.max(0, ...up) };
}
