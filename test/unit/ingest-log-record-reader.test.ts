import t from 'tap';
import { mkdtempSync, rmSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IngestLog, LogRecordReader, positionNumber } from '../../src/stores/ingest-log/index.js';

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'quill-record-reader-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const payloadOf = (i: number) => Buffer.from(`{"record":${i},"pad":"${'x'.repeat(i % 97)}"}`);

t.test('reads back any durable records by end position and length, across segments', async (t) => {
  const dir = tempDir(t);
  const log = await IngestLog.open({ dir, segmentBytes: 4096 });
  const refs: { end: number; bytes: number; i: number }[] = [];
  for (let i = 0; i < 200; i++) {
    const p = payloadOf(i);
    const end = await log.append(p);
    refs.push({ end: positionNumber(end), bytes: p.length, i });
  }
  t.ok(log.stats().segments > 3, 'the records span several segments');
  const reader = new LogRecordReader();
  t.teardown(() => reader.close());
  const all = reader.readAll(dir, refs);
  t.same(all.map((b) => b.toString()), refs.map((r) => payloadOf(r.i).toString()), 'every record, in order');
  const some = refs.filter((r) => r.i % 7 === 3);
  t.same(reader.readAll(dir, some).map((b) => b.toString()), some.map((r) => payloadOf(r.i).toString()), 'a sparse selection');
  t.same(reader.readAll(dir, [refs[5]!]).map((b) => b.toString()), [payloadOf(5).toString()], 'going back to an older segment');
  await log.close();
});

t.test('a reference the log does not hold is an error, not wrong events', async (t) => {
  const dir = tempDir(t);
  const log = await IngestLog.open({ dir });
  const p = payloadOf(1);
  const end = positionNumber(await log.append(p));
  await log.close();
  const reader = new LogRecordReader();
  t.teardown(() => reader.close());
  t.throws(() => reader.readAll(dir, [{ end, bytes: p.length + 1 }]), { name: 'RecordReadError' }, 'wrong length');
  t.throws(() => reader.readAll(dir, [{ end: end + 2 ** 32, bytes: p.length }]), 'missing segment');
  // Flip one payload byte on disk: the CRC no longer matches.
  const file = join(dir, '00000000000000000001.log');
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.from('#'), 0, 1, 8 + 3);
  closeSync(fd);
  const fresh = new LogRecordReader();
  t.teardown(() => fresh.close());
  t.throws(() => fresh.readAll(dir, [{ end, bytes: p.length }]), { name: 'RecordReadError' }, 'corrupted payload');
});
