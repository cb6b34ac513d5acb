/**
 * Sends a generated dataset (bench/lib/analytics-dataset.ts) through `/batch/` in 500-event batches on 16 lanes,
 * retrying 503s, then waits until every acknowledged event is applied (`/_stats` backlog 0). `onDay` sees each
 * day's reference rows as they are generated (the analytics bench feeds DuckDB with them).
 */
import type { Dataset, ReferenceRow } from './analytics-dataset.js';
import { PERSONAL_KEY, PROJECT_KEY } from './paths.js';
import { round1 } from './proc-stats.js';

const BATCH = 500;
const LANES = 16;

export interface DatasetLoad {
  events: number;
  acked_events_s: number;
  end_to_end_events_s: number;
  load_s: number;
  applied_s: number;
}

export async function backlogOf(base: string): Promise<number> {
  const res = await fetch(`${base}/_stats`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } });
  const body = await res.json() as { shards: { backlog: number }[] };
  return body.shards.reduce((sum, s) => sum + s.backlog, 0);
}

export async function loadDataset(base: string, dataset: Dataset, log: (msg: string) => void, onDay: (rows: ReferenceRow[]) => Promise<void> = async () => undefined): Promise<DatasetLoad> {
  const queue: unknown[][] = [];
  let generated = false;
  let acked = 0;
  const lanes = Array.from({ length: LANES }, async () => {
    for (;;) {
      const batch = queue.shift();
      if (!batch) {
        if (generated) return;
        await new Promise((r) => setTimeout(r, 2));
        continue;
      }
      const body = JSON.stringify({ api_key: PROJECT_KEY, batch });
      for (let attempt = 1; ; attempt++) {
        // A keep-alive connection the server closed while this process was busy (DuckDB appends block the loop
        // for seconds on big days) fails the next POST without reaching Quill: resend it like an SDK would; the
        // events carry uuids, so a batch that did arrive is stored once.
        const res = await fetch(`${base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).catch((error: unknown) => {
          if (attempt >= 5) throw error;
          return null;
        });
        if (res === null) continue;
        await res.arrayBuffer();
        if (res.status === 200) break;
        if (res.status !== 503) throw new Error(`/batch/ answered ${res.status}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      acked += batch.length;
    }
  });
  const started = performance.now();
  let lastLog = started;
  for (const day of dataset.days()) {
    for (let i = 0; i < day.events.length; i += BATCH) queue.push(day.events.slice(i, i + BATCH));
    await onDay(day.rows);
    while (queue.length > LANES * 8) await new Promise((r) => setTimeout(r, 5));
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`acknowledged ${acked} events`);
    }
  }
  generated = true;
  await Promise.all(lanes);
  const ackedMs = performance.now() - started;
  log(`all ${acked} acknowledged in ${(ackedMs / 1000).toFixed(1)} s; waiting for the apply`);
  while ((await backlogOf(base)) > 0) await new Promise((r) => setTimeout(r, 250));
  const appliedMs = performance.now() - started;
  return { events: acked, acked_events_s: Math.round(acked / (ackedMs / 1000)), end_to_end_events_s: Math.round(acked / (appliedMs / 1000)), load_s: round1(ackedMs / 1000), applied_s: round1(appliedMs / 1000) };
}
