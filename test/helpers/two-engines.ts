/**
 * Two Quills fed the same events: one with `QUILL_ANALYTICS=clickhouse`, exporting into chdb behind ClickHouse's
 * HTTP interface (bench/lib/clickhouse-process.ts) and answering from it, one on its own engine. The ClickHouse
 * executor suites compare their answers; this is their shared set-up and teardown.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseProcess } from '../../bench/lib/clickhouse-process.js';
import { sendBatch } from './ingest.js';
import { Client, removeDir, startQuill, type QuillProcess } from './quill.js';

export interface TwoEngines {
  ch: ClickHouseProcess;
  /** The Quill answering from ClickHouse, and its API client. */
  onClickHouse: QuillProcess;
  chApi: Client;
  /** The Quill answering from its own engine, and its API client. */
  local: QuillProcess;
  localApi: Client;
}

export interface TwoEnginesOptions {
  /**
   * Wait until each batch is applied on both Quills before sending the next one. Person ids are handed out as the
   * shards apply events, in whatever order they race; with one new person per batch and this, both Quills number
   * their persons alike, and answers ordered by person id (the persons of a point) can be compared across them.
   */
  appliedBetweenBatches?: boolean;
}

/**
 * Starts both Quills (and chdb) before the suite's tests and sends each the same batches in the same order; stops
 * everything after them, printing the ClickHouse side's output when a test failed. The fields are set once the
 * suite's `before` has run.
 */
export function twoEngines(t: Tap.Test, dataset: () => unknown[][], options: TwoEnginesOptions = {}): TwoEngines {
  const engines = {} as TwoEngines;
  t.before(async () => {
    const ch = new ClickHouseProcess(mkdtempSync(join(tmpdir(), 'quill-ch-')));
    engines.ch = ch;
    await ch.start();
    const [onClickHouse, local] = await Promise.all([
      startQuill({ env: { QUILL_CLICKHOUSE_URL: ch.url, QUILL_CLICKHOUSE_DATABASE: 'posthog', QUILL_ANALYTICS: 'clickhouse' }, workers: 2 }),
      startQuill({ workers: 2 }),
    ]);
    Object.assign(engines, { onClickHouse, local, chApi: new Client(onClickHouse.base), localApi: new Client(local.base) });
    for (const batch of dataset()) {
      for (const q of [onClickHouse, local]) {
        const res = await sendBatch(q.base, batch);
        if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
        // The events list answers once every acknowledged event is applied (its read-your-writes barrier).
        if (options.appliedBetweenBatches) await new Client(q.base).get('/api/projects/@current/events/?limit=1');
      }
    }
  });
  t.teardown(async () => {
    const { ch, onClickHouse, local } = engines;
    await Promise.all([onClickHouse?.stop(), local?.stop()]);
    if (!t.passing()) console.error(`ClickHouse shim output:\n${ch?.output.slice(-4000)}\nQuill output:\n${onClickHouse?.output().slice(-6000)}`);
    await ch?.stop();
    for (const dir of [onClickHouse?.dataDir, local?.dataDir, ch?.dataDir]) if (dir) removeDir(dir);
  });
  return engines;
}
