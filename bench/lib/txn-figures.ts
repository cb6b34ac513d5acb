/**
 * The sizes of the LMDB write transactions a running Quill has committed, read from its `/metrics`: the most
 * callbacks and the longest JavaScript time one transaction carried, and the 99th-percentile bucket of each, by
 * environment (the largest over the workers). The apply's transaction bound is judged on these
 * (src/stores/write-lane.ts).
 */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-000000';

export interface TxnFigures {
  [env: string]: { max_callbacks: number; max_js_ms: number; p99_callbacks_le: number | null; p99_js_ms_le: number | null; transactions: number };
}

export async function txnFigures(base: string): Promise<TxnFigures> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  const text = await res.text();
  const out: TxnFigures = {};
  const of = (env: string) => (out[env] ??= { max_callbacks: 0, max_js_ms: 0, p99_callbacks_le: null, p99_js_ms_le: null, transactions: 0 });
  const buckets = new Map<string, Map<number, number>>();
  for (const line of text.split('\n')) {
    const m = /^(quill_lmdb_txn_\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const [, name, labelText, valueText] = m;
    const labels = Object.fromEntries([...labelText!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const env = labels.env ?? '?';
    const value = Number(valueText);
    if (name === 'quill_lmdb_txn_max_callbacks') of(env).max_callbacks = Math.max(of(env).max_callbacks, value);
    else if (name === 'quill_lmdb_txn_max_js_seconds') of(env).max_js_ms = Math.max(of(env).max_js_ms, Math.round(value * 1e4) / 10);
    else if (name.endsWith('_bucket') && labels.le !== undefined) {
      // Summed over workers: cumulative counts by upper bound.
      const key = `${name}|${env}`;
      const m2 = buckets.get(key) ?? new Map<number, number>();
      const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
      m2.set(le, (m2.get(le) ?? 0) + value);
      buckets.set(key, m2);
    }
  }
  for (const [key, counts] of buckets) {
    const [name, env] = key.split('|') as [string, string];
    const sorted = [...counts].sort((a, b) => a[0] - b[0]);
    const total = sorted.at(-1)?.[1] ?? 0;
    const p99 = sorted.find(([, c]) => c >= 0.99 * total)?.[0] ?? null;
    const finite = p99 === null || p99 === Infinity ? null : p99;
    if (name.startsWith('quill_lmdb_txn_callbacks')) {
      of(env).p99_callbacks_le = finite;
      of(env).transactions = total;
    } else of(env).p99_js_ms_le = finite === null ? null : finite * 1000;
  }
  return out;
}
