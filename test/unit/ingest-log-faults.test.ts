import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  IngestLog,
  nodeIo,
  type LogIo,
  type LogPosition,
  type SegmentFile,
} from '../../src/stores/ingest-log/index.js';
import { missing } from '../helpers/required-environment.js';
import { mountTmpfs } from '../helpers/tmpfs.js';

/**
 * A fresh directory per test. Not t.testdir(): its path is derived from the test name, so two concurrent runs of
 * this file (e.g. two sessions running `tap test/unit/ingest*`) would share one log directory and corrupt each other.
 */
function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'quill-ingest-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Failure handling: a failed write or sync rejects its group with the fs error, the partial tail is cut before the
// next write, later appends succeed, and nothing half-written is ever replayed.

function rec(id: number, size = 100): Buffer {
  const b = Buffer.alloc(size);
  b.writeUInt32LE(id, 0);
  for (let i = 4; i < b.length; i++) b[i] = (id * 31 + i) & 0xff;
  return b;
}

async function ids(log: IngestLog): Promise<number[]> {
  const out: number[] = [];
  for await (const r of log.replay(null)) out.push(Buffer.from(r.payload).readUInt32LE(0));
  return out;
}

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code} (injected)`), { code });
}

type Op = 'writev' | 'datasync' | 'truncate' | 'create' | 'syncDir';

/**
 * Wraps the real file operations. `arm(op, code, { times, partialBytes })` makes the next `times` calls of `op` fail;
 * for writev, `partialBytes` first really writes that many bytes and reports a short write (what libuv does when the
 * disk fills mid-write), and the follow-up call fails.
 */
function faultyIo() {
  const armed = new Map<Op, { code: string; times: number; partialBytes: number }>();
  const calls: Op[] = [];
  const take = (op: Op): { code: string; partialBytes: number } | null => {
    const f = armed.get(op);
    if (!f || f.times <= 0) return null;
    return { code: f.code, partialBytes: f.partialBytes };
  };
  const consume = (op: Op) => {
    const f = armed.get(op)!;
    f.times--;
  };
  const wrap = (file: SegmentFile): SegmentFile => ({
    ...file,
    async writev(buffers, position) {
      calls.push('writev');
      const f = take('writev');
      if (!f) return file.writev(buffers, position);
      if (f.partialBytes > 0) {
        const all = Buffer.concat(buffers);
        const n = Math.min(f.partialBytes, all.length - 1);
        armed.get('writev')!.partialBytes = 0; // the next call fails
        return file.writev([all.subarray(0, n)], position);
      }
      consume('writev');
      throw errno(f.code);
    },
    async datasync() {
      calls.push('datasync');
      const f = take('datasync');
      if (f) {
        consume('datasync');
        throw errno(f.code);
      }
      return file.datasync();
    },
    async truncate(length) {
      calls.push('truncate');
      const f = take('truncate');
      if (f) {
        consume('truncate');
        throw errno(f.code);
      }
      return file.truncate(length);
    },
  });
  const io: LogIo = {
    async open(path, mode) {
      if (mode === 'create') {
        calls.push('create');
        const f = take('create');
        if (f) {
          consume('create');
          throw errno(f.code);
        }
      }
      return wrap(await nodeIo.open(path, mode));
    },
    async syncDir(path) {
      calls.push('syncDir');
      const f = take('syncDir');
      if (f) {
        consume('syncDir');
        throw errno(f.code);
      }
      return nodeIo.syncDir(path);
    },
  };
  return {
    io,
    calls,
    arm(op: Op, code: string, opts: { times?: number; partialBytes?: number } = {}) {
      armed.set(op, { code, times: opts.times ?? 1, partialBytes: opts.partialBytes ?? 0 });
    },
    disarm(op: Op) {
      armed.delete(op);
    },
  };
}

async function segmentBytesOnDisk(dir: string): Promise<number> {
  let total = 0;
  for (const f of await readdir(dir)) total += (await stat(join(dir, f))).size;
  return total;
}

t.test('ENOSPC after a short write: rejects the group, truncates, recovers', async (t) => {
  const dir = tempDir(t);
  const f = faultyIo();
  const log = await IngestLog.open({ preallocateBytes: 0, dir, io: f.io, warn: () => undefined });
  const acked: number[] = [];
  for (let i = 0; i < 5; i++) {
    await log.append(rec(i));
    acked.push(i);
  }
  const durable = log.endPosition;

  f.arm('writev', 'ENOSPC', { times: 1000, partialBytes: 150 }); // disk stays full
  const failed = [5, 6, 7].map((i) => log.append(rec(i)));
  for (const p of failed) await t.rejects(p, { code: 'ENOSPC' });
  t.same(log.endPosition, durable, 'durable end unchanged');
  t.ok((await stat(join(dir, '00000000000000000001.log'))).size > durable.offset, 'junk really reached the file');

  await t.rejects(log.append(rec(8)), { code: 'ENOSPC' }, 'still full: keeps failing');
  t.equal(log.stats().failedAppends, 4);

  f.disarm('writev'); // space returns
  for (let i = 9; i < 12; i++) {
    t.same(await log.append(rec(i)), { segment: 1, offset: durable.offset + (i - 8) * 108 }, 'written at the durable end');
    acked.push(i);
  }
  t.ok(f.calls.includes('truncate'), 'tail was truncated before the next write');
  t.same(await ids(log), acked);
  t.equal(await segmentBytesOnDisk(dir), log.endPosition.offset, 'no junk left on disk');
  await log.close();

  const again = await IngestLog.open({ preallocateBytes: 0, dir, warn: () => undefined });
  t.equal(again.recovery.truncatedBytes, 0);
  t.same(await ids(again), acked, 'replay shows exactly the acknowledged records, no half records');
  await again.close();
});

t.test('EIO on datasync: rejects, rolls back the unsynced group, later appends succeed', async (t) => {
  const dir = tempDir(t);
  const f = faultyIo();
  const log = await IngestLog.open({ preallocateBytes: 0, dir, io: f.io, warn: () => undefined });
  await log.append(rec(0));
  f.arm('datasync', 'EIO');
  await t.rejects(Promise.all([log.append(rec(1)), log.append(rec(2))]), { code: 'EIO' });
  t.same(log.endPosition, { segment: 1, offset: 108 });
  t.same(await log.append(rec(3)), { segment: 1, offset: 216 });
  t.same(await ids(log), [0, 3]);
  await log.close();
});

t.test('appends queued behind a failing group get their own attempt', async (t) => {
  const dir = tempDir(t);
  const f = faultyIo();
  const log = await IngestLog.open({ preallocateBytes: 0, dir, io: f.io, warn: () => undefined });
  await log.append(rec(0));
  f.arm('writev', 'ENOSPC');
  const first = log.append(rec(1)).then(
    () => 'ok',
    (e: NodeJS.ErrnoException) => e.code,
  ); // group A (fails)
  await new Promise((r) => setImmediate(r)); // group A is in flight
  const second = log.append(rec(2)); // queued for group B
  t.equal(await first, 'ENOSPC');
  t.same(await second, { segment: 1, offset: 216 });
  t.same(await ids(log), [0, 2]);
  await log.close();
});

t.test('a failing repair truncate fails the next group too, until it succeeds', async (t) => {
  const dir = tempDir(t);
  const f = faultyIo();
  const log = await IngestLog.open({ preallocateBytes: 0, dir, io: f.io, warn: () => undefined });
  await log.append(rec(0));
  f.arm('writev', 'ENOSPC', { partialBytes: 50 });
  f.arm('truncate', 'EIO');
  await t.rejects(log.append(rec(1)), { code: 'ENOSPC' });
  await t.rejects(log.append(rec(2)), { code: 'EIO' }, 'cannot write before the tail is cut');
  t.same(await log.append(rec(3)), { segment: 1, offset: 216 });
  t.same(await ids(log), [0, 3]);
  await log.close();
});

t.test('rotation failure: rejects, no further writes into the old segment, then rotates', async (t) => {
  const dir = tempDir(t);
  const f = faultyIo();
  const log = await IngestLog.open({ preallocateBytes: 0, dir, io: f.io, segmentBytes: 250, warn: () => undefined });
  await log.append(rec(0));
  await log.append(rec(1)); // segment 1 now holds 216 bytes
  f.arm('syncDir', 'EIO'); // the new file is created but its directory entry cannot be made durable
  await t.rejects(log.append(rec(2)), { code: 'EIO' });
  t.same(log.endPosition, { segment: 1, offset: 216 });
  // Even a record that would fit must not go into segment 1 any more.
  f.arm('create', 'ENOSPC');
  await t.rejects(log.append(rec(3, 20)), { code: 'ENOSPC' });
  t.equal((await stat(join(dir, '00000000000000000001.log'))).size, 216);
  t.same(await log.append(rec(4, 20)), { segment: 2, offset: 28 });
  t.same(await ids(log), [0, 1, 4]);
  await log.close();
  const again = await IngestLog.open({ preallocateBytes: 0, dir, segmentBytes: 250, warn: () => undefined });
  t.same(await ids(again), [0, 1, 4]);
  await again.close();
});

t.test('crash after a failed write (no rollback happened): open cuts the junk', async (t) => {
  const dir = tempDir(t);
  const f = faultyIo();
  const log = await IngestLog.open({ preallocateBytes: 0, dir, io: f.io, warn: () => undefined });
  await log.append(rec(0));
  f.arm('writev', 'ENOSPC', { partialBytes: 60 });
  await t.rejects(log.append(rec(1)), { code: 'ENOSPC' });
  // Simulate the process dying here: the old instance is abandoned, a new one opens the same directory.
  const warnings: string[] = [];
  const again = await IngestLog.open({ preallocateBytes: 0, dir, warn: (m) => warnings.push(m) });
  t.equal(again.recovery.truncatedBytes, 60);
  t.match(warnings[0], /dropped 60 bytes/);
  t.same(await ids(again), [0]);
  await again.close();
  await log.close();
});

// A real full file system. tmpfs needs CAP_SYS_ADMIN; without it the test fails (test/helpers/required-environment.ts).
t.test('real ENOSPC on a 256k tmpfs: fails, then recovers after releaseUpTo frees space', async (t) => {
  const fs = mountTmpfs('256k', 'ingest-log-tmpfs-');
  if (typeof fs === 'string') return missing(t, 'tmpfs', 'the real-ENOSPC test', fs);
  t.teardown(() => fs.unmount());
  process.once('exit', () => fs.unmount()); // also when the file aborts before teardown runs
  const dir = join(fs.dir, 'shard');
  const log = await IngestLog.open({ preallocateBytes: 0, dir, segmentBytes: 32 * 1024, warn: () => undefined });
  const acked: { id: number; end: LogPosition }[] = [];
  let firstError: NodeJS.ErrnoException | undefined;
  let id = 0;
  // Concurrent bursts, so the failure hits multi-record groups.
  while (!firstError && id < 5000) {
    const burst = [...Array(8).keys()].map(() => id++);
    const settled = await Promise.allSettled(burst.map((i) => log.append(rec(i, 1000 + (i % 13) * 50))));
    settled.forEach((s, k) => {
      if (s.status === 'fulfilled') acked.push({ id: burst[k]!, end: s.value });
      else firstError ??= s.reason as NodeJS.ErrnoException;
    });
  }
  t.equal(firstError?.code, 'ENOSPC', 'the file system filled up');
  t.ok(acked.length > 100, `${acked.length} records acknowledged before ENOSPC`);
  await t.rejects(log.append(rec(id++, 8000)), { code: 'ENOSPC' }, 'a large record still does not fit');

  // The apply loop checkpoints everything so far; sealed segments go away and space returns.
  await log.releaseUpTo(log.endPosition);
  t.equal(log.stats().segments, 1);
  for (let i = 0; i < 20; i++) {
    const n = id++;
    acked.push({ id: n, end: await log.append(rec(n, 1000)) });
  }
  await log.close();

  const again = await IngestLog.open({ preallocateBytes: 0, dir, segmentBytes: 32 * 1024, warn: () => undefined });
  t.equal(again.recovery.truncatedBytes, 0, 'no torn tail: the failed groups were rolled back');
  const firstLive = Math.min(...(await readdir(dir)).map((f) => Number(f.slice(0, 20))));
  const expected = acked.filter((a) => a.end.segment >= firstLive).map((a) => a.id);
  t.same(await ids(again), expected, 'every acknowledged record in live segments, in order, nothing else');
  await again.close();
});
