/**
 * Which bucket labels an x axis keeps so that none overlaps the next: labels are centred on their bucket, buckets
 * are `plotWidth / count` pixels apart, and two kept labels need the widest label's width plus a gap between their
 * centres. Pure, so the thinning is tested without a browser; the chart measures the label widths.
 */
export function bucketTickStep(count: number, widestLabel: number, plotWidth: number, gap: number): number {
  if (count <= 1 || plotWidth <= 0) return 1;
  const perBucket = plotWidth / count;
  return Math.max(1, Math.ceil((widestLabel + gap) / perBucket));
}

/** The bucket indexes between `min` and `max` that carry a label, every `step`-th from the first bucket. */
export function bucketTicks(count: number, step: number, min: number, max: number): number[] {
  const out: number[] = [];
  const first = Math.max(0, Math.ceil(min));
  const start = first + ((step - (first % step)) % step);
  for (let i = start; i <= Math.min(count - 1, Math.floor(max)); i += step) out.push(i);
  return out;
}

