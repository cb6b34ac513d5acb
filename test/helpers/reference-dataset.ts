/**
 * The differential tests' setup: a generated dataset (bench/lib/analytics-dataset.ts) sent to the test's Quill
 * through `/batch/`, one request at a time so events are applied in time order (a person's created_at is then its
 * first event's time, as the lifecycle reference reads it), then the same rows loaded into DuckDB. Other Quills
 * (`alsoTo`: one answering from ClickHouse, test/helpers/executor-mirror.ts) get every batch too, in the same order.
 */
import { Dataset, type DatasetOptions, type ReferenceRow } from '../../bench/lib/analytics-dataset.js';
import { DuckReference } from '../../bench/lib/duckdb-reference.js';
import { PROJECT_KEY, type Client } from './quill.js';

export interface ReferenceDataset {
  dataset: Dataset;
  rows: ReferenceRow[];
  duck: DuckReference;
}

export async function loadReferenceDataset(base: string, api: Client, options: DatasetOptions, alsoTo: readonly Client[] = []): Promise<ReferenceDataset> {
  const dataset = new Dataset(options);
  const rows: ReferenceRow[] = [];
  const bases = [base, ...alsoTo.map((c) => c.base)];
  for (const day of dataset.days()) {
    rows.push(...day.rows);
    for (let i = 0; i < day.events.length; i += 1000) {
      const body = JSON.stringify({ api_key: PROJECT_KEY, batch: day.events.slice(i, i + 1000) });
      await Promise.all(bases.map(async (b) => {
        const res = await fetch(`${b}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
      }));
    }
  }
  // Every analysis waits for what was acknowledged before it, but only so long (10 s): on a busy machine the apply
  // may need longer, so wait for the backlog to drain before asking anything.
  for (const client of [api, ...alsoTo]) {
    for (;;) {
      const stats = await client.get('/_stats');
      if (stats.status !== 200) throw new Error(`/_stats: ${stats.status} ${stats.text}`);
      if (stats.body.shards.every((s: { backlog: number }) => s.backlog === 0)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const duck = await DuckReference.open();
  await duck.append(rows);
  await duck.finish(options.persons * 2, (d) => dataset.personOfDevice(d));
  return { dataset, rows, duck };
}
