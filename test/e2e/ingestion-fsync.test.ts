// "200 means fdatasync'ed", checked on the running server: with the test-only durability trace
// (QUILL_DURABILITY_TRACE, src/worker/ingest/durability-trace.ts) each worker journals, in order, the writes of its
// ingest logs, the start and end of every fdatasync and every acknowledgement. For each acknowledged request the
// journal must show: the write that put its record's last byte in the segment, then an fdatasync of that file
// started after that write and completed, then the acknowledgement. A log opened without fsync (or an
// acknowledgement sent before the sync completes) fails this test; a kill -9 test cannot see either, since the
// page cache survives the process.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2, env: { QUILL_DURABILITY_TRACE: '1' } });

type Step =
  | { e: 'write'; file: string; from: number; to: number }
  | { e: 'sync' | 'synced'; file: string; id: number }
  | { e: 'ack'; file: string; end: number };

function journals(dataDir: string): Map<string, Step[]> {
  const dir = join(dataDir, 'durability-trace');
  const out = new Map<string, Step[]>();
  for (const name of readdirSync(dir)) {
    const lines = readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean);
    out.set(name, lines.map((l) => JSON.parse(l) as Step));
  }
  return out;
}

/** Why the acknowledgement at `at` is not backed by a completed fdatasync of its write, or null when it is. */
function unbacked(steps: Step[], at: number): string | null {
  const ack = steps[at] as Extract<Step, { e: 'ack' }>;
  let written = -1;
  for (let i = at - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (s.e === 'write' && s.file === ack.file && s.from < ack.end && s.to >= ack.end) {
      written = i;
      break;
    }
  }
  if (written < 0) return `no write of ${ack.file} up to ${ack.end} before its acknowledgement`;
  const started = new Set<number>();
  for (let i = written + 1; i < at; i++) {
    const s = steps[i]!;
    if (s.e === 'sync' && s.file === ack.file) started.add(s.id);
    if (s.e === 'synced' && started.has(s.id)) return null;
  }
  return `${ack.file} up to ${ack.end}: no fdatasync started after its write and completed before its acknowledgement`;
}

t.test('every acknowledged request was written and fdatasync\'ed before its 200', async (t) => {
  const base = server.q.base;
  let acknowledged = 0;
  const refused: number[] = [];
  // Concurrent senders, so groups of several records and two syncs in flight occur; single captures and batches.
  await Promise.all(Array.from({ length: 12 }, async (_, c) => {
    for (let i = 0; i < 15; i++) {
      const res = i % 3 === 0
        ? await sendBatch(base, Array.from({ length: 20 }, (_, k) => event(`fsync-${c}-${k}`, 'batched', { i })))
        : await fetch(`${base}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'single', distinct_id: `fsync-${c}`, properties: { i } }) });
      if (res.status === 200) acknowledged++;
      else refused.push(res.status);
    }
  }));
  t.same(refused, [], 'every request acknowledged');

  const byWorker = journals(server.q.dataDir);
  t.equal(byWorker.size, 2, 'both workers journaled');
  let acks = 0;
  let syncs = 0;
  const problems: string[] = [];
  for (const [name, steps] of byWorker) {
    steps.forEach((s, i) => {
      if (s.e === 'synced') syncs++;
      if (s.e !== 'ack') return;
      acks++;
      const problem = unbacked(steps, i);
      if (problem) problems.push(`${name}: ${problem}`);
    });
  }
  t.equal(acks, acknowledged, 'one journaled acknowledgement per 200');
  t.same(problems.slice(0, 10), [], 'each is preceded by its write and a completed fdatasync of it');
  t.ok(syncs > 0, `${syncs} fdatasyncs completed for ${acks} acknowledgements`);
});
