import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { appendFile, readFile, readdir, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  IngestLog,
  IngestLogCorruptError,
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

// Recovery on open: what a crash (or a damaged last record) leaves at the end of the last segment is cut off,
// reported, and never replayed; damage elsewhere is refused, not skipped.

const SEG1 = '00000000000000000001.log';

function rec(id: number, size = 64): Buffer {
  const b = Buffer.alloc(size);
  b.writeUInt32LE(id, 0);
  for (let i = 4; i < b.length; i++) b[i] = (id * 31 + i) & 0xff;
  return b;
}

async function ids(log: IngestLog, from: LogPosition | null = null): Promise<number[]> {
  const out: number[] = [];
  for await (const r of log.replay(from)) out.push(Buffer.from(r.payload).readUInt32LE(0));
  return out;
}

/** Opens with a warning collector. */
async function open(dir: string, segmentBytes?: number) {
  const warnings: string[] = [];
  // Exact byte layouts on disk: no preallocated zeros (preallocation has its own tests in ingest-log.test.ts).
  const log = await IngestLog.open({ dir, segmentBytes, preallocateBytes: 0, warn: (m) => warnings.push(m) });
  return { log, warnings };
}

/** Writes `n` records of 64 bytes (72 framed) and closes. */
async function seed(dir: string, n: number): Promise<LogPosition[]> {
  const { log } = await open(dir);
  const ends: LogPosition[] = [];
  for (let i = 0; i < n; i++) ends.push(await log.append(rec(i)));
  await log.close();
  return ends;
}

async function expectCleanReopen(t: Tap, dir: string, expected: number[]) {
  const { log, warnings } = await open(dir);
  t.equal(log.recovery.truncatedBytes, 0, 'second open finds a clean tail');
  t.same(warnings, []);
  t.same(await ids(log), expected);
  await log.close();
}
type Tap = { equal: typeof t.equal; same: typeof t.same };

t.test('torn tail: last record cut mid-payload plus garbage', async (t) => {
  const dir = tempDir(t);
  const ends = await seed(dir, 10);
  const path = join(dir, SEG1);
  await truncate(path, ends[9]!.offset - 30); // half of record 9 survives
  await appendFile(path, Buffer.from('garbage-after-the-torn-record'));
  const sizeBefore = (await stat(path)).size;

  const { log, warnings } = await open(dir);
  const dropped = sizeBefore - ends[8]!.offset;
  t.same(log.recovery, { segment: 1, truncatedBytes: dropped, reason: log.recovery.reason });
  t.match(log.recovery.reason, /runs past end|invalid length|crc/);
  t.equal(warnings.length, 1);
  t.match(warnings[0], new RegExp(`dropped ${dropped} bytes`));
  t.equal((await stat(path)).size, ends[8]!.offset, 'file truncated to the last valid record');
  t.same(log.endPosition, ends[8]);
  t.same(await ids(log), [...Array(9).keys()]);

  // New records follow the last valid one directly.
  t.same(await log.append(rec(100)), { segment: 1, offset: ends[8]!.offset + 72 });
  await log.close();
  await expectCleanReopen(t, dir, [...Array(9).keys(), 100]);
});

t.test('torn header: only part of the length field made it', async (t) => {
  const dir = tempDir(t);
  const ends = await seed(dir, 3);
  await truncate(join(dir, SEG1), ends[1]!.offset + 3);
  const { log, warnings } = await open(dir);
  t.equal(log.recovery.truncatedBytes, 3);
  t.match(log.recovery.reason, /truncated header/);
  t.equal(warnings.length, 1);
  t.same(await ids(log), [0, 1]);
  await log.close();
});

t.test('CRC corruption in the last record drops it', async (t) => {
  const dir = tempDir(t);
  const ends = await seed(dir, 5);
  const path = join(dir, SEG1);
  const bytes = await readFile(path);
  bytes[ends[4]!.offset - 10]! ^= 0x40; // flip one payload bit of record 4
  await writeFile(path, bytes);

  const { log } = await open(dir);
  t.equal(log.recovery.truncatedBytes, 72);
  t.equal(log.recovery.reason, 'crc mismatch');
  t.same(await ids(log), [0, 1, 2, 3]);
  await log.close();
  await expectCleanReopen(t, dir, [0, 1, 2, 3]);
});

t.test('zero-filled tail (size persisted, data not) is dropped', async (t) => {
  const dir = tempDir(t);
  await seed(dir, 4);
  await appendFile(join(dir, SEG1), Buffer.alloc(4096));
  const { log } = await open(dir);
  t.equal(log.recovery.truncatedBytes, 4096);
  t.match(log.recovery.reason, /zero-filled tail/, 'indistinguishable from preallocation, so no warning');
  t.same(await ids(log), [0, 1, 2, 3]);
  await log.close();
});

t.test('a whole garbage last segment is emptied, not fatal', async (t) => {
  const dir = tempDir(t);
  await writeFile(join(dir, SEG1), Buffer.from('this is not a log'));
  const { log } = await open(dir);
  t.equal(log.recovery.truncatedBytes, 17);
  t.same(log.endPosition, { segment: 1, offset: 0 });
  await log.append(rec(1));
  t.same(await ids(log), [1]);
  await log.close();
});

t.test('only the last segment is repaired; corruption in a sealed segment fails replay loudly', async (t) => {
  const dir = tempDir(t);
  {
    const { log } = await open(dir, 300);
    for (let i = 0; i < 20; i++) await log.append(rec(i));
    await log.close();
  }
  const files = (await readdir(dir)).sort();
  t.ok(files.length >= 3);
  const sealed = join(dir, files[0]!);
  const bytes = await readFile(sealed);
  bytes[20]! ^= 0xff; // inside record 0 of segment 1
  await writeFile(sealed, bytes);

  const { log, warnings } = await open(dir, 300);
  t.equal(log.recovery.truncatedBytes, 0);
  t.same(warnings, []);
  const err = await ids(log).catch((e: unknown) => e);
  t.type(err, IngestLogCorruptError);
  t.match(err, { code: 'INGEST_LOG_CORRUPT', offset: 0, reason: 'crc mismatch' });
  // Replay from a checkpoint past the damage is unaffected.
  const from = { segment: Number(files[1]!.slice(0, 20)), offset: 0 };
  t.ok((await ids(log, from)).length > 0);
  await log.close();
});

t.test('an empty last segment (crash right after rotation) is used as the active one', async (t) => {
  const dir = tempDir(t);
  const ends = await seed(dir, 3);
  await writeFile(join(dir, '00000000000000000002.log'), Buffer.alloc(0));
  await writeFile(join(dir, 'README.txt'), 'not a segment');
  await writeFile(join(dir, '00000000000000000003.log.tmp'), 'not a segment either');
  const { log } = await open(dir);
  t.same(log.endPosition, { segment: 2, offset: 0 });
  t.equal(log.stats().segments, 2);
  t.equal(log.stats().bytes, ends[2]!.offset);
  t.same(await log.append(rec(3)), { segment: 2, offset: 72 });
  t.same(await ids(log), [0, 1, 2, 3]);
  t.same(await ids(log, ends[2]!), [3]);
  await log.close();
});

t.test('records larger than the reader chunk replay intact', async (t) => {
  const dir = tempDir(t);
  const { log } = await open(dir);
  const big = rec(1, 3 * 1024 * 1024 + 17);
  await log.append(rec(0));
  await log.append(big);
  await log.append(rec(2));
  await log.close();
  const again = (await open(dir)).log;
  const got: Buffer[] = [];
  for await (const r of again.replay(null)) got.push(Buffer.from(r.payload));
  t.equal(got.length, 3);
  t.ok(got[1]!.equals(big), 'big payload identical');
  t.equal(got[2]!.readUInt32LE(0), 2);
  await again.close();
});
