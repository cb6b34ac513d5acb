import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  IngestLog,
  IngestLogClosedError,
  comparePositions,
  type IngestLogOptions,
  type LogPosition,
} from '../../src/stores/ingest-log/index.js';

/**
 * A fresh directory per test. Not t.testdir(): its path is derived from the test name, so two concurrent runs of
 * this file (e.g. two sessions running `tap test/unit/ingest*`) would share one log directory and corrupt each other.
 */
function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'quill-ingest-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Basic behaviour: framing round trip, positions, rotation, replay, release, group commit, close.

// Most tests check exact byte layouts; preallocation is switched off except where it is the subject.
const quiet = { warn: () => undefined, preallocateBytes: 0 };

function rec(id: number, size = 64): Buffer {
  const b = Buffer.alloc(Math.max(size, 4));
  b.writeUInt32LE(id, 0);
  for (let i = 4; i < b.length; i++) b[i] = (id * 31 + i) & 0xff;
  return b;
}

function idOf(payload: Uint8Array): number {
  return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).readUInt32LE(0);
}

function increasing(ends: LogPosition[]): boolean {
  return ends.every((e, i) => i === 0 || comparePositions(ends[i - 1]!, e) < 0);
}

async function replayAll(log: IngestLog, from: LogPosition | null = null) {
  const out: { id: number; end: LogPosition; len: number }[] = [];
  for await (const r of log.replay(from)) out.push({ id: idOf(r.payload), end: r.end, len: r.payload.length });
  return out;
}

async function openLog(t: { teardown(fn: () => unknown): void }, opts: Partial<IngestLogOptions> = {}) {
  const dir = opts.dir ?? tempDir(t);
  return IngestLog.open({ ...quiet, ...opts, dir });
}

t.test('comparePositions orders by segment, then offset', async (t) => {
  t.equal(comparePositions({ segment: 1, offset: 5 }, { segment: 1, offset: 5 }), 0);
  t.ok(comparePositions({ segment: 1, offset: 4 }, { segment: 1, offset: 5 }) < 0);
  t.ok(comparePositions({ segment: 1, offset: 999 }, { segment: 2, offset: 0 }) < 0);
  t.ok(comparePositions({ segment: 3, offset: 0 }, { segment: 2, offset: 10 }) > 0);
});

t.test('append, endPosition, replay and reopen', async (t) => {
  const dir = tempDir(t);
  const log = await openLog(t, { dir });
  t.same(log.endPosition, { segment: 1, offset: 0 });
  t.same(await readdir(dir), ['00000000000000000001.log']);

  const ends: LogPosition[] = [];
  for (let i = 0; i < 20; i++) ends.push(await log.append(rec(i, 10 + i)));
  t.ok(increasing(ends), 'positions increase');
  t.same(ends[0], { segment: 1, offset: 8 + 10 });
  t.same(log.endPosition, ends[19]);

  const all = await replayAll(log);
  t.same(all.map((r) => r.id), [...Array(20).keys()]);
  t.same(all.map((r) => r.end), ends, 'replay reports the same end positions as append');
  t.same(all.map((r) => r.len), [...Array(20).keys()].map((i) => 10 + i));

  t.same((await replayAll(log, ends[4]!)).map((r) => r.id), [...Array(15).keys()].map((i) => i + 5), 'strictly after');
  t.same(await replayAll(log, log.endPosition), [], 'nothing after the end');
  const { syncMs, syncMaxMs, syncLatency, ...counts } = log.stats();
  t.same(counts, { segments: 1, bytes: ends[19]!.offset, appends: 20, syncs: 20, groups: 20, failedAppends: 0 });
  t.equal(syncLatency.counts.reduce((a, b) => a + b, 0), 20, 'every sync is in one latency bucket');
  t.equal(syncLatency.counts.length, syncLatency.boundsMs.length + 1, 'one bucket per bound, and one above the last');
  t.ok(Number.isInteger(syncMs) && syncMs >= 0, 'time spent in fdatasync, in whole milliseconds');
  t.ok(syncMaxMs >= 0 && syncMaxMs <= syncMs + 1, 'the longest single fdatasync, within the total');
  await log.close();
  t.equal((await stat(join(dir, '00000000000000000001.log'))).size, ends[19]!.offset);

  const again = await openLog(t, { dir });
  t.same(again.recovery, { segment: 1, truncatedBytes: 0, reason: null });
  t.same(again.endPosition, ends[19]);
  t.same((await replayAll(again)).map((r) => r.id), [...Array(20).keys()]);
  t.same(await again.append(rec(20)), { segment: 1, offset: ends[19]!.offset + 8 + 64 });
  await again.close();
});

t.test('payload is copied at append time', async (t) => {
  const log = await openLog(t);
  const buf = rec(7);
  const p = log.append(buf);
  buf.fill(0xee); // caller reuses its buffer before the group is written
  await p;
  const [r] = await replayAll(log);
  t.equal(r!.id, 7);
  await log.close();
});

t.test('rejects empty payloads (a zero length marks a torn/zeroed tail)', async (t) => {
  const log = await openLog(t);
  await t.rejects(log.append(new Uint8Array(0)), RangeError);
  t.same(log.stats().appends, 0);
  await log.close();
});

t.test('rotation and replay across segments', async (t) => {
  const dir = tempDir(t);
  const segmentBytes = 1024;
  const log = await openLog(t, { dir, segmentBytes });
  const ends: LogPosition[] = [];
  // Concurrent bursts, so groups must be split at segment boundaries.
  for (let burst = 0; burst < 10; burst++) {
    const ps: Promise<LogPosition>[] = [];
    for (let i = 0; i < 10; i++) ps.push(log.append(rec(burst * 10 + i, 40 + ((burst * 10 + i) % 7) * 20)));
    ends.push(...(await Promise.all(ps)));
  }
  const files = (await readdir(dir)).sort();
  t.ok(files.length > 5, `rotated into ${files.length} segments`);
  t.equal(log.stats().segments, files.length);
  for (const f of files) t.ok((await stat(join(dir, f))).size <= segmentBytes, `${f} within segmentBytes`);
  t.ok(increasing(ends), 'positions increase in call order');

  const all = await replayAll(log);
  t.same(all.map((r) => r.id), [...Array(100).keys()]);
  t.same(all.map((r) => r.end), ends);
  // Replay from every record end (including ends that coincide with a segment's last byte).
  for (let k = 0; k < ends.length; k += 7) {
    t.same((await replayAll(log, ends[k]!)).map((r) => r.id), [...Array(99 - k).keys()].map((i) => i + k + 1));
  }
  t.same((await replayAll(log, { segment: 0, offset: 0 })).length, 100, 'a position before the first segment');
  await log.close();

  const again = await openLog(t, { dir, segmentBytes });
  t.same((await replayAll(again)).map((r) => r.id), [...Array(100).keys()]);
  t.same(again.stats().bytes, log.stats().bytes);
  await again.close();
});

t.test('a record larger than segmentBytes gets a segment of its own', async (t) => {
  const dir = tempDir(t);
  const log = await openLog(t, { dir, segmentBytes: 100 });
  const a = await log.append(rec(1, 50));
  const b = await log.append(rec(2, 500));
  const c = await log.append(rec(3, 50));
  t.same([a.segment, b.segment, c.segment], [1, 2, 3]);
  t.same((await replayAll(log)).map((r) => r.id), [1, 2, 3]);
  await log.close();
});

t.test('a replay skips the segments released while it runs', async (t) => {
  const dir = tempDir(t);
  const log = await openLog(t, { dir, segmentBytes: 512 });
  const ends: LogPosition[] = [];
  for (let i = 0; i < 40; i++) ends.push(await log.append(rec(i, 100)));
  const ids: number[] = [];
  let released = false;
  for await (const r of log.replay(null)) {
    ids.push(idOf(r.payload));
    if (!released && r.end.segment === 1) {
      // While the replay reads segment 1, everything up to the end of segment 3 is released.
      await log.releaseUpTo(ends.filter((e) => e.segment === 3).at(-1)!);
      released = true;
    }
  }
  t.ok(released);
  const firstOf4 = ends.findIndex((e) => e.segment === 4);
  const inSegment1 = ends.filter((e) => e.segment === 1).length;
  t.same(ids, [...[...Array(inSegment1).keys()], ...[...Array(40 - firstOf4).keys()].map((i) => i + firstOf4)],
    'segment 1 (already open) to its end, then segments 4 onwards; 2 and 3 are gone');
});

t.test('releaseUpTo deletes whole sealed segments only', async (t) => {
  const dir = tempDir(t);
  const log = await openLog(t, { dir, segmentBytes: 512 });
  const ends: LogPosition[] = [];
  for (let i = 0; i < 60; i++) ends.push(await log.append(rec(i, 100)));
  const segsBefore = (await readdir(dir)).length;
  t.ok(segsBefore >= 10);

  // A checkpoint in the middle of segment 3: segments 1 and 2 end before it, 3 does not.
  const mid = ends.find((e) => e.segment === 3)!;
  await log.releaseUpTo(mid);
  t.same((await readdir(dir)).sort()[0], '00000000000000000003.log');
  t.equal(log.stats().segments, segsBefore - 2);
  const after = await replayAll(log, mid);
  t.same(after.map((r) => r.id), [...Array(60 - ends.indexOf(mid) - 1).keys()].map((i) => i + ends.indexOf(mid) + 1));

  // The exact end of segment 3 releases segment 3 too.
  const endOf3 = ends.filter((e) => e.segment === 3).at(-1)!;
  await log.releaseUpTo(endOf3);
  t.same((await readdir(dir)).sort()[0], '00000000000000000004.log');

  // Releasing everything keeps the active segment, so numbering keeps growing.
  await log.releaseUpTo(log.endPosition);
  const active = log.endPosition.segment;
  t.same(await readdir(dir), [`${String(active).padStart(20, '0')}.log`]);
  t.equal(log.stats().segments, 1);
  t.same(log.stats().bytes, log.endPosition.offset);
  const next = await log.append(rec(60, 100));
  t.ok(next.segment >= active);
  t.ok(comparePositions(next, ends[59]!) > 0);
  await log.releaseUpTo({ segment: 0, offset: 0 }); // no-op
  await log.close();

  const again = await openLog(t, { dir, segmentBytes: 512 });
  t.ok((await replayAll(again)).map((r) => r.id).includes(60));
  await again.close();
});

t.test('group commit coalesces concurrent appends', async (t) => {
  const log = await openLog(t);
  const ps: Promise<LogPosition>[] = [];
  for (let i = 0; i < 1000; i++) ps.push(log.append(rec(i, 100)));
  const ends = await Promise.all(ps);
  t.ok(increasing(ends), 'positions increase in call order');
  const s = log.stats();
  t.equal(s.appends, 1000);
  t.equal(s.syncs, 1, 'one synchronous burst is one group');

  // Appends issued while a sync is in flight queue for the next group.
  const more: Promise<LogPosition>[] = [];
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 20; i++) more.push(log.append(rec(1000 + round * 20 + i, 100)));
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(more);
  const s2 = log.stats();
  t.equal(s2.appends, 2000);
  t.ok(s2.syncs - s.syncs < 1000 / 4, `syncs ${s2.syncs - s.syncs} << 1000 appends`);
  t.same((await replayAll(log)).map((r) => r.id), [...Array(2000).keys()], 'log order = call order');
  await log.close();
});

t.test('group size is bounded by maxGroupBytes', async (t) => {
  const log = await openLog(t, { maxGroupBytes: 4096 });
  const ps: Promise<LogPosition>[] = [];
  for (let i = 0; i < 100; i++) ps.push(log.append(rec(i, 1000)));
  await Promise.all(ps);
  t.equal(log.stats().groups, 25, '4 records of 1008 bytes per 4 KiB group');
  await log.close();
});

t.test('close waits for queued appends; append after close rejects', async (t) => {
  const dir = tempDir(t);
  const log = await openLog(t, { dir });
  const ps: Promise<LogPosition>[] = [];
  for (let i = 0; i < 100; i++) ps.push(log.append(rec(i)));
  const closed = log.close();
  await t.rejects(log.append(rec(100)), IngestLogClosedError);
  await closed;
  t.equal((await Promise.allSettled(ps)).filter((r) => r.status === 'fulfilled').length, 100);
  await log.close(); // idempotent
  const again = await openLog(t, { dir });
  t.equal((await replayAll(again)).length, 100);
  await again.close();
});

t.test('fsync: false still writes and replays (no syncs counted)', async (t) => {
  const dir = tempDir(t);
  const log = await openLog(t, { dir, fsync: false, segmentBytes: 300 });
  await Promise.all([...Array(30).keys()].map((i) => log.append(rec(i))));
  t.equal(log.stats().syncs, 0);
  t.ok(log.stats().groups > 0);
  await log.close();
  const again = await openLog(t, { dir, fsync: false });
  t.same((await replayAll(again)).map((r) => r.id), [...Array(30).keys()]);
  await again.close();
});

t.test('creates missing parent directories', async (t) => {
  const dir = join(tempDir(t), 'a', 'b', 'shard-0');
  const log = await openLog(t, { dir });
  await log.append(rec(1));
  await log.close();
  t.same(await readdir(dir), ['00000000000000000001.log']);
});

t.test('preallocation: zeros ahead of the durable end, exact sealed segments, clean reopen', async (t) => {
  const dir = tempDir(t);
  const log = await openLog(t, { dir, preallocateBytes: 16 * 1024, segmentBytes: 64 * 1024 });
  const ends: LogPosition[] = [];
  for (let i = 0; i < 10; i++) ends.push(await log.append(rec(i, 200)));
  const active = join(dir, '00000000000000000001.log');
  t.equal((await stat(active)).size, 16 * 1024, 'the active segment is zero-filled one chunk ahead');
  t.equal(log.endPosition.offset, ends.at(-1)!.offset, 'the durable end is where the records end');
  // Fill past the first segment: the sealed one is trimmed to its last record.
  for (let i = 10; i < 400; i++) await log.append(rec(i, 200));
  t.ok(log.stats().segments > 1, 'rotated');
  t.ok((await stat(active)).size < 64 * 1024 && (await stat(active)).size % 208 === 0, 'sealed segment ends on a record boundary');
  await log.close();
  const warnings: string[] = [];
  const again = await IngestLog.open({ dir, warn: (m) => warnings.push(m) });
  t.same(warnings, [], 'preallocated zeros are not reported as a torn tail');
  t.match(again.recovery.reason ?? '', /zero-filled/);
  const seen: number[] = [];
  for await (const r of again.replay(null)) seen.push(Buffer.from(r.payload).readUInt32LE(0));
  t.same(seen, Array.from({ length: 400 }, (_, i) => i), 'replay returns every record exactly once');
  await again.append(rec(400, 200));
  await again.close();
});
