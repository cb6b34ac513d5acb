/**
 * A Prometheus metric whose samples are read from Quill's own counters when it is scraped, instead of being
 * counted twice (the shards already count what they acknowledge and apply, the ingest logs histogram their
 * fdatasyncs). prom-client's registry accepts any object with `name` and `get()`; `get` returns the same JSON
 * shape as prom-client's own metrics, so the front aggregates both alike (AggregatorRegistry.aggregate).
 */
export type Labels = Record<string, string | number>;

export interface Sample {
  labels: Labels;
  value: number;
  /** For histogram series: `<name>_bucket`, `<name>_sum`, `<name>_count`. */
  metricName?: string;
}

export type MetricType = 'counter' | 'gauge' | 'histogram';
/** How the front combines the same series from several workers (prom-client's aggregator names). */
export type Aggregator = 'sum' | 'max' | 'first';

export class SnapshotMetric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    private readonly read: () => Sample[],
    readonly aggregator: Aggregator = 'sum',
  ) {}

  get(): { name: string; help: string; type: MetricType; values: Sample[]; aggregator: Aggregator } {
    return { name: this.name, help: this.help, type: this.type, values: this.read(), aggregator: this.aggregator };
  }
}

/**
 * The samples of a Prometheus histogram from per-bucket counts: `counts[i]` observations fell at or under
 * `bounds[i]` (and above the previous bound), the last entry above every bound.
 */
export function histogramSamples(name: string, labels: Labels, bounds: readonly number[], counts: readonly number[], sum: number): Sample[] {
  const out: Sample[] = [];
  let cumulative = 0;
  bounds.forEach((le, i) => {
    cumulative += counts[i] ?? 0;
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative });
  });
  cumulative += counts[bounds.length] ?? 0;
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative });
  out.push({ metricName: `${name}_sum`, labels, value: sum });
  out.push({ metricName: `${name}_count`, labels, value: cumulative });
  return out;
}
