import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readdir, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IngestLog } from '../../../src/stores/ingest-log/index.js';
import { crashPayload } from '../../fixtures/ingest-log-crash-child.js';
import { TYPESCRIPT_LOADER_ARGS } from '../../helpers/typescript-loader.js';

/**
 * A fresh directory per test. Not t.testdir(): its path is derived from the test name, so two concurrent runs of
 * this file (e.g. two sessions running `tap test/unit/ingest*`) would share one log directory and corrupt each other.
 */
function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'quill-ingest-log-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// kill -9 at a random moment while 16 appenders hammer the log: every number the child printed (= acknowledged)
// must be in the log after reopening, in order, exactly once; the log holds a gap-free prefix of each run.
//
// The child imports the TypeScript module through the same loader tap uses for this file (taken from execArgv), so
// it tests the current sources without compiling the whole project (which other work in progress may break).

const RUNS = 5;
const KILL_AFTER_MS = 300;
const SEGMENT_BYTES = 256 * 1024; // small, so kills also land around rotations
const CONCURRENCY = 16;

const child = fileURLToPath(new URL('../../fixtures/ingest-log-crash-child.ts', import.meta.url));
const loaderArgs = TYPESCRIPT_LOADER_ARGS;

interface ChildResult {
  acked: number[];
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

function runChild(dir: string, run: number, preallocate: number): Promise<ChildResult> {
  const env = { ...process.env, PREALLOCATE: String(preallocate) };
  delete env.NODE_OPTIONS; // no coverage/processinfo hooks in a process we are going to SIGKILL
  const proc = spawn(
    process.execPath,
    [...loaderArgs, child, dir, String(run), String(SEGMENT_BYTES), String(CONCURRENCY)],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const acked: number[] = [];
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: proc.stdout }).on('line', (line) => {
    if (line === 'ready') setTimeout(() => proc.kill('SIGKILL'), KILL_AFTER_MS);
    else if (/^\d+$/.test(line)) acked.push(Number(line));
  });
  // Safety net: a child that never becomes ready is killed too.
  const guard = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  return new Promise((resolve) => {
    proc.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ acked, signal, code, stderr });
    });
  });
}

// Both layouts: plain appends, and preallocated zeros ahead of the durable end (the production default).
for (const preallocate of [0, 64 * 1024]) t.test(`acknowledged appends survive SIGKILL (preallocate ${preallocate})`, async (t) => {
  if (loaderArgs.length === 0) return void t.fail('no TypeScript loader in execArgv: run this file under tap');
  t.setTimeout(180_000);
  const dir = tempDir(t);
  const prefixLen: number[] = []; // records of run r found in the log, fixed once observed

  for (let run = 0; run < RUNS; run++) {
    const res = await runChild(dir, run, preallocate);
    t.equal(res.signal, 'SIGKILL', `run ${run}: child was killed, not exited (stderr: ${res.stderr.slice(0, 500)})`);
    t.ok(res.acked.length > 0, `run ${run}: child acknowledged ${res.acked.length} records before the kill`);

    const lastSegment = (await readdir(dir)).sort().at(-1)!;
    const sizeAtKill = (await stat(join(dir, lastSegment))).size;
    const warnings: string[] = [];
    const log = await IngestLog.open({ dir, segmentBytes: SEGMENT_BYTES, warn: (m) => warnings.push(m) });
    // Open cut the last segment back to the end of its last valid record, and reports exactly what it cut.
    t.equal(log.recovery.segment, Number(lastSegment.slice(0, 20)), `run ${run}: recovery looked at the last segment`);
    t.equal(log.recovery.truncatedBytes, sizeAtKill - log.endPosition.offset, `run ${run}: open dropped ${log.recovery.truncatedBytes} bytes past the last valid record`);
    t.equal(log.recovery.reason === null, log.recovery.truncatedBytes === 0, 'a reason is given exactly when bytes were dropped');
    // A torn write is reported; preallocated zeros are dropped silently.
    t.equal(warnings.length, log.recovery.truncatedBytes > 0 && !/zero-filled/.test(log.recovery.reason ?? '') ? 1 : 0, 'a torn-tail truncation is reported');

    const perRun = new Map<number, number[]>();
    const ends = new Map<number, string[]>();
    let lastRun = -1;
    let badPayloads = 0;
    let runOrder = true;
    for await (const r of log.replay(null)) {
      const p = Buffer.from(r.payload);
      const rr = p.readUInt32LE(0);
      const n = p.readUInt32LE(4);
      if (!p.equals(crashPayload(rr, n))) badPayloads++;
      if (rr < lastRun) runOrder = false;
      lastRun = rr;
      const list = perRun.get(rr) ?? [];
      list.push(n);
      perRun.set(rr, list);
      const e = ends.get(rr) ?? [];
      e.push(`${r.end.segment}:${r.end.offset}`);
      ends.set(rr, e);
    }
    t.equal(badPayloads, 0, 'every replayed payload is intact');
    t.ok(runOrder, 'runs appear in order');

    const mine = perRun.get(run) ?? [];
    const firstBad = mine.findIndex((n, i) => n !== i);
    t.ok(firstBad === -1, `run ${run}: log holds 0..${mine.length - 1} in order, each exactly once`, {
      firstBad,
      around: mine.slice(Math.max(0, firstBad - 3), firstBad + 3),
      aroundEnds: ends.get(run)?.slice(Math.max(0, firstBad - 3), firstBad + 3),
      files: await Promise.all((await readdir(dir)).sort().map(async (f) => `${f}=${(await stat(join(dir, f))).size}`)),
    });
    const lost = res.acked.filter((n) => n >= mine.length);
    t.same(lost, [], `run ${run}: all ${res.acked.length} acknowledged records present`);
    prefixLen[run] = mine.length;
    for (let earlier = 0; earlier < run; earlier++) {
      t.equal(perRun.get(earlier)?.length ?? 0, prefixLen[earlier], `run ${earlier} unchanged by later runs`);
    }

    // The tail is clean: the last segment ends exactly at the last valid record, and reopening drops nothing.
    const files = (await readdir(dir)).sort();
    t.equal((await stat(join(dir, files.at(-1)!))).size, log.endPosition.offset, 'last segment ends at endPosition');
    await log.close();
    const again = await IngestLog.open({ dir, segmentBytes: SEGMENT_BYTES, warn: () => undefined });
    t.equal(again.recovery.truncatedBytes, 0, 'second open finds nothing to truncate');
    await again.close();
  }
  t.ok((await readdir(dir)).length > 1, 'kills happened across several segments');
});
