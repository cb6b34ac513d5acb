import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { IngestLog, nodeIo, SYNC_BOUNDS_MS, syncBucket, type LogIo, type LogPosition, type SegmentFile } from '../../src/stores/ingest-log/index.js';

// Group commits overlap: while one group's fdatasync is in flight the next group is written and synced at once (up
// to maxSyncsInFlight). Acknowledgements must still come strictly in log order, each group only after its own sync,
// and a failed sync must take every later group in flight down with it.

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'quill-ingest-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function rec(id: number, size = 100): Buffer {
  const b = Buffer.alloc(size, id & 0xff);
  b.writeUInt32LE(id, 0);
  return b;
}
const FRAME = 108; // 8-byte header + 100-byte payload

async function ids(log: IngestLog): Promise<number[]> {
  const out: number[] = [];
  for await (const r of log.replay(null)) out.push(Buffer.from(r.payload).readUInt32LE(0));
  return out;
}

/** A sync the test lets finish (really syncing first) or fail, in any order it likes. */
interface HeldSync {
  /** Resolves once the real sync completed and the log was told. */
  finish(): Promise<void>;
  fail(code: string): void;
}

/** The real file operations with some of a segment file's methods replaced; `opened` records every open as it is asked for. */
function wrappedIo(replace: (file: SegmentFile) => Partial<SegmentFile>, opened: string[] = []): LogIo {
  return {
    async open(path, mode) {
      opened.push(`${mode} ${basename(path)}`);
      const file = await nodeIo.open(path, mode);
      return { ...file, ...replace(file) };
    },
    syncDir: (path) => nodeIo.syncDir(path),
  };
}

/** Real file operations, except that every datasync of a segment waits until the test releases it. */
function gatedIo() {
  const held: HeldSync[] = [];
  const opened: string[] = [];
  let waiter: (() => void) | null = null;
  const io = wrappedIo((file) => ({
    datasync: () =>
      new Promise<void>((resolve, reject) => {
        held.push({
          finish: () => file.datasync().then(resolve, reject),
          fail: (code) => reject(Object.assign(new Error(`${code} (injected)`), { code })),
        });
        waiter?.();
      }),
  }), opened);
  return {
    io,
    held,
    opened,
    /** Resolves once `n` syncs have been requested in total. */
    async syncsRequested(n: number): Promise<void> {
      while (held.length < n) await new Promise<void>((r) => (waiter = r));
      waiter = null;
    },
  };
}

/** A log in a fresh directory whose syncs the test releases (no preallocation: file sizes are exact). */
async function openGated(t: { teardown(fn: () => unknown): void }, opts: { maxSyncsInFlight?: number; segmentBytes?: number } = {}) {
  const dir = tempDir(t);
  const g = gatedIo();
  const log = await IngestLog.open({ preallocateBytes: 0, dir, io: g.io, ...opts });
  return { dir, g, log };
}

/**
 * Lets every promise callback already queued run (a macrotask runs only after the microtask queue is empty). The
 * log decides, writes (synchronously) and asks for its syncs and file opens in promise callbacks, so after this
 * anything a step could have triggered has at least been asked for: "nothing happened" checks look at what was
 * asked (held syncs, recorded opens, bytes written), never at how long the test waited.
 */
const settle = () => new Promise<void>((r) => setImmediate(r));

function track(p: Promise<LogPosition>) {
  const state: { value?: LogPosition; error?: NodeJS.ErrnoException; order: number } = { order: -1 };
  return { p: p.then((v) => (state.value = v), (e: NodeJS.ErrnoException) => (state.error = e)), state };
}

t.test('a second group is written and synced while the first sync is in flight; acks stay in order', async (t) => {
  const { dir, g, log } = await openGated(t);
  const order: number[] = [];
  const a = log.append(rec(1)).then((pos) => (order.push(1), pos));
  await g.syncsRequested(1);
  const b = log.append(rec(2)).then((pos) => (order.push(2), pos));
  await g.syncsRequested(2);
  t.equal(g.held.length, 2, 'two fdatasyncs in flight at once');
  t.equal((await stat(join(dir, '00000000000000000001.log'))).size, 2 * FRAME, 'both groups written before either sync ended');

  await g.held[1]!.finish(); // the later sync ends first
  await settle();
  t.same(order, [], 'the second group waits for the first one to be acknowledged');
  t.same(log.endPosition, { segment: 1, offset: 0 });

  g.held[0]!.finish();
  t.same(await a, { segment: 1, offset: FRAME });
  t.same(await b, { segment: 1, offset: 2 * FRAME });
  t.same(order, [1, 2], 'acknowledged in log order');
  t.same(log.endPosition, { segment: 1, offset: 2 * FRAME });
  const stats = log.stats();
  t.equal(stats.syncs, 2);
  t.equal(stats.groups, 2);
  t.equal(stats.appends, 2);
  await log.close();
});

t.test('no more than maxSyncsInFlight groups sync at once; the rest queue into one group', async (t) => {
  const { dir, g, log } = await openGated(t, { maxSyncsInFlight: 2 });
  const first = log.append(rec(1));
  await g.syncsRequested(1);
  const second = log.append(rec(2));
  await g.syncsRequested(2);
  const queued = [3, 4, 5].map((i) => log.append(rec(i)));
  await settle();
  t.equal(g.held.length, 2, 'the third group waits for a free sync');
  t.equal((await stat(join(dir, '00000000000000000001.log'))).size, 2 * FRAME, 'and is not written yet');

  g.held[0]!.finish();
  await first;
  await g.syncsRequested(3);
  t.equal((await stat(join(dir, '00000000000000000001.log'))).size, 5 * FRAME, 'records 3-5 went out as one group');
  g.held[1]!.finish();
  g.held[2]!.finish();
  await second;
  t.same(await Promise.all(queued), [3, 4, 5].map((i) => ({ segment: 1, offset: i * FRAME })));
  t.equal(log.stats().groups, 3);
  t.same(await ids(log), [1, 2, 3, 4, 5]);
  await log.close();
});

t.test('maxSyncsInFlight 1: one group at a time, as a plain group commit', async (t) => {
  const { dir, g, log } = await openGated(t, { maxSyncsInFlight: 1 });
  const first = log.append(rec(1));
  await g.syncsRequested(1);
  const rest = [2, 3].map((i) => log.append(rec(i)));
  await settle();
  t.equal(g.held.length, 1);
  g.held[0]!.finish();
  await first;
  await g.syncsRequested(2);
  g.held[1]!.finish();
  t.same(await Promise.all(rest), [{ segment: 1, offset: 2 * FRAME }, { segment: 1, offset: 3 * FRAME }]);
  await t.rejects(IngestLog.open({ dir, maxSyncsInFlight: 0 }), RangeError);
  await log.close();
});

t.test('a failed sync rejects its group and every later one in flight, even one whose own sync succeeded', async (t) => {
  const { dir, g, log } = await openGated(t);
  const zero = log.append(rec(0));
  await g.syncsRequested(1);
  g.held[0]!.finish();
  t.same(await zero, { segment: 1, offset: FRAME });

  const a = track(log.append(rec(1)));
  await g.syncsRequested(2);
  const b = track(log.append(rec(2)));
  await g.syncsRequested(3);
  g.held[2]!.finish(); // b's own sync succeeds ...
  g.held[1]!.fail('EIO'); // ... but a's fails: b lies behind bytes that are about to be cut
  await Promise.all([a.p, b.p]);
  t.equal(a.state.error?.code, 'EIO');
  t.equal(b.state.error?.code, 'EIO', 'the later group is rejected with the same error');
  t.same(log.endPosition, { segment: 1, offset: FRAME });
  t.equal(log.stats().failedAppends, 2);

  const c = log.append(rec(3));
  await g.syncsRequested(4); // the truncation is synced before anything else is written
  g.held[3]!.finish();
  await g.syncsRequested(5);
  g.held[4]!.finish();
  t.same(await c, { segment: 1, offset: 2 * FRAME }, 'the next record follows the last acknowledged one');
  t.equal((await stat(join(dir, '00000000000000000001.log'))).size, 2 * FRAME, 'the rejected bytes are gone');
  t.same(await ids(log), [0, 3]);
  await log.close();

  const again = await IngestLog.open({ preallocateBytes: 0, dir });
  t.equal(again.recovery.truncatedBytes, 0);
  t.same(await ids(again), [0, 3], 'replay after reopening: only acknowledged records');
  await again.close();
});

t.test('a group being written when an earlier sync fails is rejected too', async (t) => {
  const dir = tempDir(t);
  let failNext: (() => void) | null = null;
  const io = wrappedIo((file) => ({
    // The first datasync fails only once the second group's write has started.
    datasync: () =>
      failNext === null
        ? new Promise<void>((_, reject) => (failNext = () => reject(Object.assign(new Error('EIO (injected)'), { code: 'EIO' }))))
        : file.datasync(),
    writev: async (buffers, position) => {
      const n = await file.writev(buffers, position);
      if (position > 0 && failNext !== null) {
        failNext();
        await settle();
      }
      return n;
    },
  }));
  const log = await IngestLog.open({ preallocateBytes: 0, dir, io });
  const a = track(log.append(rec(1)));
  await settle();
  const b = track(log.append(rec(2)));
  await Promise.all([a.p, b.p]);
  t.equal(a.state.error?.code, 'EIO');
  t.equal(b.state.error?.code, 'EIO', 'written behind the failed group, so rejected with its error');
  t.same(await log.append(rec(3)), { segment: 1, offset: FRAME });
  t.same(await ids(log), [3]);
  await log.close();
});

t.test('a rotation waits until every group of the old segment is acknowledged', async (t) => {
  const { dir, g, log } = await openGated(t, { segmentBytes: 2 * FRAME });
  const first = track(log.append(rec(1)));
  await g.syncsRequested(1);
  const second = track(log.append(rec(2))); // fits: written and synced beside the first
  await g.syncsRequested(2);
  const third = track(log.append(rec(3))); // needs a new segment
  await settle();
  t.equal(g.held.length, 2, 'no third sync while the old segment still has groups in flight');
  t.equal((await stat(join(dir, '00000000000000000001.log'))).size, 2 * FRAME);
  t.same(g.opened, ['create 00000000000000000001.log'], 'the next segment is not even asked for yet');
  g.held[0]!.finish();
  g.held[1]!.finish();
  await Promise.all([first.p, second.p]);
  await g.syncsRequested(3);
  g.held[2]!.finish();
  await third.p;
  t.same(third.state.value, { segment: 2, offset: FRAME }, 'the third record opens segment 2');
  t.same(await ids(log), [1, 2, 3]);
  await log.close();
});

t.test('the sync-latency histogram puts a held sync in a bucket above the time it was held', async (t) => {
  const { g, log } = await openGated(t);
  const quick = log.append(rec(1));
  await g.syncsRequested(1);
  g.held[0]!.finish();
  await quick;
  const slow = log.append(rec(2));
  await g.syncsRequested(2);
  const heldMs = 30;
  await new Promise((r) => setTimeout(r, heldMs));
  g.held[1]!.finish();
  await slow;
  const { syncs, syncLatency } = log.stats();
  t.equal(syncs, 2);
  t.equal(syncLatency.counts.reduce((a, b) => a + b, 0), 2, 'both syncs counted once');
  // The held sync took at least `heldMs` (timers never fire early), so its bucket's bound is at least that; how much
  // longer it took is the machine's business, so that side is not asserted.
  let slowest = syncLatency.counts.length - 1;
  while (slowest > 0 && syncLatency.counts[slowest] === 0) slowest--;
  const bound = syncLatency.boundsMs[slowest] ?? Infinity;
  t.ok(bound >= heldMs, `held ${heldMs} ms: counted in the bucket up to ${bound} ms`);
  await log.close();
});

t.test('syncBucket: a duration goes to the first bound it does not exceed', async (t) => {
  t.equal(syncBucket(0), 0);
  t.equal(syncBucket(SYNC_BOUNDS_MS[0]!), 0, 'a bound belongs to its own bucket');
  t.equal(syncBucket(SYNC_BOUNDS_MS[0]! + 0.01), 1);
  t.equal(syncBucket(SYNC_BOUNDS_MS.at(-1)!), SYNC_BOUNDS_MS.length - 1);
  t.equal(syncBucket(SYNC_BOUNDS_MS.at(-1)! + 1), SYNC_BOUNDS_MS.length, 'longer than every bound: the last bucket');
});
