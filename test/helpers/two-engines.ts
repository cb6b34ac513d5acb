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

/** chdb and a Quill exporting into it and answering analyses from it. */
export interface OnClickHouse {
  ch: ClickHouseProcess;
  onClickHouse: QuillProcess;
  chApi: Client;
}

export interface TwoEngines extends OnClickHouse {
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

const exportingTo = (ch: ClickHouseProcess, analytics: 'clickhouse' | 'local') =>
  ({ QUILL_CLICKHOUSE_URL: ch.url, QUILL_CLICKHOUSE_DATABASE: 'posthog', QUILL_ANALYTICS: analytics });

/** Starts chdb, then a Quill (2 workers, as the suites' local Quills) with `QUILL_ANALYTICS=clickhouse` on it. */
export async function startOnClickHouse(env: Record<string, string> = {}): Promise<OnClickHouse> {
  const ch = new ClickHouseProcess(mkdtempSync(join(tmpdir(), 'quill-ch-')));
  await ch.start();
  const onClickHouse = await startQuill({ env: { ...exportingTo(ch, 'clickhouse'), ...env }, workers: 2 })
    .catch(async (error: unknown) => {
      await stopOnClickHouse({ ch }, true);
      throw error;
    });
  return { ch, onClickHouse, chApi: new Client(onClickHouse.base) };
}

/**
 * Restarts the Quill on ClickHouse on its own data directory with its local engine answering: the reference for its
 * ClickHouse answers on exactly the same persons and events. (Two Quills fed the same events need not hold the same
 * persons: a person whose distinct ids live on two shards gets the created_at of whichever shard applied first.)
 */
export async function restartOnLocalEngine(engines: OnClickHouse): Promise<Client> {
  const { dataDir } = engines.onClickHouse;
  await engines.onClickHouse.stop();
  engines.onClickHouse = await startQuill({ dataDir, env: exportingTo(engines.ch, 'local'), workers: 2 });
  engines.chApi = new Client(engines.onClickHouse.base);
  return engines.chApi;
}

/** Stops the Quill and chdb and removes their data, printing their output first when the suite failed. */
export async function stopOnClickHouse(engines: Partial<OnClickHouse>, passing: boolean): Promise<void> {
  const { ch, onClickHouse } = engines;
  await onClickHouse?.stop();
  if (!passing) console.error(`ClickHouse shim output:\n${ch?.output.slice(-4000)}\nQuill output:\n${onClickHouse?.output().slice(-6000)}`);
  await ch?.stop();
  for (const dir of [onClickHouse?.dataDir, ch?.dataDir]) if (dir) removeDir(dir);
}

/**
 * Starts both Quills (and chdb) before the suite's tests and sends each the same batches in the same order; stops
 * everything after them, printing the ClickHouse side's output when a test failed. The fields are set once the
 * suite's `before` has run.
 */
export function twoEngines(t: Tap.Test, dataset: () => unknown[][], options: TwoEnginesOptions = {}): TwoEngines {
  const engines = {} as TwoEngines;
  t.before(async () => {
    const [onClickHouse, local] = await Promise.all([startOnClickHouse(), startQuill({ workers: 2 })]);
    Object.assign(engines, onClickHouse, { local, localApi: new Client(local.base) });
    for (const batch of dataset()) {
      for (const q of [engines.onClickHouse, local]) {
        const res = await sendBatch(q.base, batch);
        if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
        // The events list answers once every acknowledged event is applied (its read-your-writes barrier).
        if (options.appliedBetweenBatches) await new Client(q.base).get('/api/projects/@current/events/?limit=1');
      }
    }
  });
  t.teardown(async () => {
    await engines.local?.stop();
    await stopOnClickHouse(engines, t.passing());
    if (engines.local?.dataDir) removeDir(engines.local.dataDir);
  });
  return engines;
}
