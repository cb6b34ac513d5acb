// The data-directory lock (src/worker/data-dir-lock.ts) on the real server: a quill.pid naming a live process that is
// not its holder (a pid reused after a restart) is taken over; a directory held by a running Quill is refused after a
// short wait; a start that waits gets the directory as soon as its holder exits, and a SIGKILLed Quill's directory is
// taken over at once.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { logLines, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';
import { parseProcStat } from '../../src/worker/data-dir-lock.js';

/** What a running Quill's lock file should say: its pid and its start time from /proc. */
function lockOf(q: QuillProcess): string {
  const stat = parseProcStat(readFileSync(`/proc/${q.proc.pid}/stat`, 'utf8'));
  return `${q.proc.pid} ${stat!.startTime}\n`;
}

async function healthy(q: QuillProcess): Promise<number> {
  return (await fetch(`${q.base}/_health`)).status;
}

t.test('a quill.pid naming a live process that is not its holder is taken over', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-test-'));
  t.teardown(() => removeDir(dataDir));
  const pidFile = join(dataDir, 'quill.pid');
  // This test runner is alive, and it is not a Quill: a restarted container's init or npm holding the old pid.
  for (const [what, content] of [['bare pid', `${process.pid}\n`], ['pid with another start time', `${process.pid} 1\n`]] as const) {
    writeFileSync(pidFile, content);
    const q = await startQuill({ dataDir });
    t.equal(await healthy(q), 200, `${what}: started`);
    t.match(logLines(q.output()).find((l) => l.event === 'data_dir_lock_takeover'), { stale_pid: process.pid }, `${what}: says it took the lock over`);
    t.notOk(logLines(q.output()).some((l) => l.event === 'data_dir_lock_wait'), `${what}: did not wait`);
    t.equal(readFileSync(pidFile, 'utf8'), lockOf(q), `${what}: the lock names the new holder and its start time`);
    t.equal(await q.stop('SIGTERM'), 0);
    t.notOk(existsSync(pidFile), `${what}: released at exit`);
  }
});

t.test('a second Quill on a directory held by a running Quill is refused after a short wait', async (t) => {
  const q = await startQuill();
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const pidFile = join(q.dataDir, 'quill.pid');
  const held = readFileSync(pidFile, 'utf8');
  t.equal(held, lockOf(q));

  const began = Date.now();
  let refusal = '';
  await t.rejects(
    startQuill({ dataDir: q.dataDir }).catch((error: Error) => {
      refusal = error.message;
      throw error;
    }),
    new RegExp(`exited with 1 before listening[\\s\\S]*data directory ${q.dataDir} is in use by another Quill process \\(pid ${q.proc.pid}\\)`),
  );
  const tookMs = Date.now() - began;
  // The promise: the holder is waited for 5 s, then the start is refused; the margin covers a loaded machine's start-up.
  t.ok(tookMs < 45_000, `refused within the wait and start-up (${tookMs} ms; bound: 5 s wait + 40 s margin)`);
  t.match(refusal, /"event":"data_dir_lock_wait"/, 'it said it was waiting for the holder');
  t.equal(await healthy(q), 200, 'the running Quill is untouched');
  t.equal(readFileSync(pidFile, 'utf8'), held, 'and keeps its lock');
});

t.test('a waiting start gets the directory when its holder exits; a SIGKILLed holder\'s directory at once', async (t) => {
  const started: QuillProcess[] = [];
  t.teardown(async () => {
    for (const q of started) await q.stop();
    removeDir(started[0]!.dataDir);
  });
  const first = await startQuill();
  started.push(first);
  let stopping: Promise<number | null> | null = null;
  let early = '';
  const second = await startQuill({
    dataDir: first.dataDir,
    onOutput: (chunk) => {
      early += chunk;
      if (!stopping && early.includes('"event":"data_dir_lock_wait"')) stopping = first.stop('SIGTERM');
    },
  });
  started.push(second);
  t.ok(stopping, 'the second start waited for the first');
  t.equal(await stopping, 0, 'the first drained and exited');
  t.equal(await healthy(second), 200, 'the second started once the first had gone');
  t.equal(readFileSync(join(first.dataDir, 'quill.pid'), 'utf8'), lockOf(second));

  t.equal(await second.stop('SIGKILL'), null, 'killed');
  t.ok(existsSync(join(first.dataDir, 'quill.pid')), 'a killed Quill leaves its lock behind');
  const third = await startQuill({ dataDir: first.dataDir });
  started.push(third);
  t.equal(await healthy(third), 200, 'restarted at once after the kill');
  t.match(logLines(third.output()).find((l) => l.event === 'data_dir_lock_takeover'), { stale_pid: second.proc.pid });
  t.notOk(logLines(third.output()).some((l) => l.event === 'data_dir_lock_wait'), 'without waiting');
  t.equal(readFileSync(join(first.dataDir, 'quill.pid'), 'utf8'), lockOf(third));
});
