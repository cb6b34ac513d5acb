// Disk use stays bounded over a long run (src/README.md: "a log record is released once every shard owning one of its
// events has applied and flushed it"). With 256 KiB log segments (QUILL_LOG_SEGMENT_MB) and rounds of traffic many
// times larger, the ingest logs grow during each round and shrink back to their one active segment once
// everything is applied, round after round; every event is stored.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { event, sendBatch } from '../helpers/ingest.js';
import { quillForFile } from '../helpers/quill.js';

const SEGMENT_BYTES = 256 * 1024;
const server = quillForFile(t, { workers: 2, env: { QUILL_LOG_SEGMENT_MB: String(SEGMENT_BYTES / 1024 / 1024) } });

/** Segment files of every shard's ingest log: their count and bytes on disk, per shard. */
function logFiles(dataDir: string): { shard: string; files: number; bytes: number }[] {
  const shards = join(dataDir, 'shards');
  return readdirSync(shards).sort().map((shard) => {
    const dir = join(shards, shard, 'log');
    const segments = readdirSync(dir).filter((f) => f.endsWith('.log'));
    return { shard, files: segments.length, bytes: segments.reduce((n, f) => n + statSync(join(dir, f)).size, 0) };
  });
}

t.test('log segments are released once applied: the logs shrink back after every round', async (t) => {
  const blob = 'x'.repeat(400);
  let sent = 0;
  let peakFiles = 0;
  for (let round = 0; round < 4; round++) {
    // ~2 MB per round (8 segments' worth), from 8 concurrent senders.
    await Promise.all(Array.from({ length: 8 }, async (_, c) => {
      for (let i = 0; i < 6; i++) {
        const batch = Array.from({ length: 100 }, (_, k) => event(`release-${c}-${k % 10}`, 'release', { round, blob }));
        const res = await sendBatch(server.q.base, batch);
        if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
        sent += batch.length;
      }
      peakFiles = Math.max(peakFiles, ...logFiles(server.q.dataDir).map((s) => s.files));
    }));
    const total = await eventually(`round ${round}: every event applied`, async () => {
      const res = await server.api.get('/_stats');
      const shards: { appliedEvents: number; duplicateEvents: number }[] = res.body.shards;
      const applied = shards.reduce((n, s) => n + s.appliedEvents, 0);
      return applied === sent ? applied : null;
    });
    t.equal(total, sent, `round ${round}: all ${sent} events applied`);
    const shrunk = await eventually(`round ${round}: the logs to release their applied segments`, () => {
      const now = logFiles(server.q.dataDir);
      return now.every((s) => s.files === 1 && s.bytes <= SEGMENT_BYTES) ? now : null;
    });
    t.ok(shrunk.length === 2, `round ${round}: each shard's log is back to one segment (${shrunk.map((s) => `${s.bytes} B`).join(', ')})`);
  }
  t.ok(peakFiles > 2, `the logs did grow to ${peakFiles} segments during a round (so releasing was needed)`);
  // Every record is released, not only the sealed segments (the active one stays whatever it holds).
  const shards = await eventually('every record to be released', async () => {
    const s: { unreleasedRecords: number; log: { segments: number } }[] = (await server.api.get('/_stats')).body.shards;
    return s.every((x) => x.unreleasedRecords === 0) ? s : null;
  });
  t.match(shards, [{ unreleasedRecords: 0, log: { segments: 1 } }, { unreleasedRecords: 0, log: { segments: 1 } }]);
});
