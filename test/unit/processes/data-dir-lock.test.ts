// The data-directory lock (src/worker/data-dir-lock.ts): /proc/<pid>/stat parsing, when a recorded holder still
// holds the lock, waiting for a genuine holder, taking over stale locks, and one winner among racing starts.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  formatLockFile, holderRuns, linuxProc, lockDataDir, parseLockFile, parseProcStat, selfHolder, type LockHolder, type ProcSource,
} from '../../../src/worker/data-dir-lock.js';
import { TYPESCRIPT_LOADER_ARGS } from '../../helpers/typescript-loader.js';

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'quill-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A /proc/<pid>/stat line: fields 3..52 numbered so that field N holds `f<N>`, except state and starttime. */
function statLine(pid: number, comm: string, state: string, startTime: string): string {
  const fields = Array.from({ length: 50 }, (_, i) => `${i + 3}`);
  fields[0] = state;
  fields[22 - 3] = startTime;
  return `${pid} (${comm}) ${fields.join(' ')}\n`;
}

/** A process that just sleeps, started through `name` (a symlink to sleep), so its comm is `name`. */
function sleeper(t: { teardown(fn: () => unknown): void }, name = 'sleep'): ChildProcess {
  const dir = tempDir(t);
  const link = join(dir, name);
  symlinkSync('/bin/sleep', link);
  const child = spawn(link, ['60'], { stdio: 'ignore' });
  t.teardown(() => void child.kill('SIGKILL'));
  return child;
}

const hasProc = linuxProc.available();

t.test('parseProcStat: the fields after the last ")" of the command name', async (t) => {
  t.same(parseProcStat(statLine(42, 'node', 'S', '123456')), { pid: 42, comm: 'node', state: 'S', startTime: '123456' });
  // A command name may hold spaces and parentheses, including ") " that looks like its end.
  t.same(parseProcStat(statLine(7, 'a) (b c)', 'R', '99')), { pid: 7, comm: 'a) (b c)', state: 'R', startTime: '99' });
  t.same(parseProcStat(statLine(7, ') S 1 2 3 4 5 6 7 8', 'Z', '5')), { pid: 7, comm: ') S 1 2 3 4 5 6 7 8', state: 'Z', startTime: '5' });
  t.same(parseProcStat(statLine(8, '', 'S', '1')), { pid: 8, comm: '', state: 'S', startTime: '1' });
  t.equal(parseProcStat(''), null);
  t.equal(parseProcStat('42 node S 1 2'), null, 'no parentheses');
  t.equal(parseProcStat('42 (node) S 1 2 3'), null, 'too few fields');
  t.equal(parseProcStat(statLine(42, 'node', 'S', 'x1')), null, 'a start time that is not a number');
});

t.test('parseProcStat on real processes, one whose name has spaces and parentheses', { skip: !hasProc && 'no /proc' }, async (t) => {
  const self = parseProcStat(readFileSync(`/proc/${process.pid}/stat`, 'utf8'));
  t.equal(self?.pid, process.pid);
  t.match(self?.startTime, /^\d+$/);
  const odd = sleeper(t, 'a) (b c)');
  await new Promise((r) => odd.once('spawn', r));
  const stat = parseProcStat(readFileSync(`/proc/${odd.pid}/stat`, 'utf8'));
  t.equal(stat?.pid, odd.pid);
  t.equal(stat?.comm, 'a) (b c)', 'the kernel names it after the symlink it was started through');
  t.match(stat?.state, /^[RSD]$/);
  t.ok(BigInt(stat!.startTime) >= BigInt(self!.startTime), 'started after this process');
  t.equal(holderRuns({ pid: odd.pid!, startTime: stat!.startTime }), true, 'its lock, with its start time, is held');
  t.equal(holderRuns({ pid: odd.pid!, startTime: String(BigInt(stat!.startTime) + 1n) }), false, 'another start time is another process');
});

t.test('lock file content: "<pid> <starttime>", and the bare pid of earlier versions', async (t) => {
  t.same(parseLockFile('123 456\n'), { pid: 123, startTime: '456' });
  t.same(parseLockFile('123'), { pid: 123, startTime: null });
  t.same(parseLockFile('123\n'), { pid: 123, startTime: null });
  for (const bad of ['', '\n', 'abc', '0', '-5', '12 ab', '1 2 3', '{"pid":1}']) t.equal(parseLockFile(bad), null, JSON.stringify(bad));
  t.equal(formatLockFile({ pid: 9, startTime: '77' }), '9 77\n');
  t.equal(formatLockFile({ pid: 9, startTime: null }), '9\n');
  t.equal(Number.parseInt(formatLockFile({ pid: 9, startTime: '77' }), 10), 9, 'an earlier Quill reading the leading pid still finds it');
  if (hasProc) t.same(selfHolder(), { pid: process.pid, startTime: parseProcStat(readFileSync('/proc/self/stat', 'utf8'))!.startTime });
});

/** A process table to ask: pid → its stat state, start time and command line. */
function fakeProc(table: Record<number, { state?: string; start?: string; args?: string[] | null; hidden?: boolean }>, available = true): ProcSource {
  return {
    available: () => available,
    alive: (pid) => pid in table,
    stat: (pid) => (table[pid] && !table[pid].hidden ? statLine(pid, 'x', table[pid].state ?? 'S', table[pid].start ?? '1') : null),
    cmdline: (pid) => (table[pid] && !table[pid].hidden ? table[pid].args ?? [] : null),
  };
}

t.test('holderRuns: a pid and its start time name one process; a bare pid needs Quill\'s command line', async (t) => {
  const proc = fakeProc({
    10: { start: '500', args: ['node', 'dist/src/main.js'] },
    11: { start: '600', args: ['/usr/bin/node', '/app/dist/src/main.js'] },
    12: { start: '700', args: ['/sbin/init'] },
    13: { start: '800', args: ['node', '/usr/lib/node_modules/npm/bin/npm-cli.js', 'start'] },
    14: { state: 'Z', start: '900', args: [] },
    15: { hidden: true },
  });
  const runs = (h: LockHolder) => holderRuns(h, proc, 1);
  t.equal(runs({ pid: 10, startTime: '500' }), true, 'same pid, same start time');
  t.equal(runs({ pid: 10, startTime: '499' }), false, 'same pid, another start time: the pid was reused');
  t.equal(runs({ pid: 99, startTime: '500' }), false, 'no such pid');
  t.equal(runs({ pid: 14, startTime: '900' }), false, 'a zombie has exited');
  t.equal(runs({ pid: 15, startTime: '1' }), true, 'alive but hidden from /proc: pid liveness decides');
  t.equal(runs({ pid: 1, startTime: '500' }), false, 'our own pid is never another writer');
  t.equal(runs({ pid: 10, startTime: null }), true, 'bare pid of `node dist/src/main.js`');
  t.equal(runs({ pid: 11, startTime: null }), true, 'bare pid of node with an absolute main.js');
  t.equal(runs({ pid: 12, startTime: null }), false, 'bare pid now held by init');
  t.equal(runs({ pid: 13, startTime: null }), false, 'bare pid now held by npm');
  t.equal(runs({ pid: 14, startTime: null }), false, 'bare pid of a zombie');
  t.equal(runs({ pid: 15, startTime: null }), true, 'bare pid whose command line cannot be read: pid liveness decides');
  t.equal(runs({ pid: 99, startTime: null }), false, 'bare pid, no such process');
  const noProc = fakeProc({ 12: { start: '700', args: ['/sbin/init'] } }, false);
  t.equal(holderRuns({ pid: 12, startTime: '1' }, noProc, 1), true, 'without /proc, a live pid holds');
  t.equal(holderRuns({ pid: 12, startTime: null }, noProc, 1), true);
  t.equal(holderRuns({ pid: 99, startTime: '1' }, noProc, 1), false);
});

t.test('lockDataDir: writes "<pid> <starttime>", releases only its own lock', async (t) => {
  const dir = tempDir(t);
  const release = await lockDataDir(dir);
  const path = join(dir, 'quill.pid');
  t.equal(readFileSync(path, 'utf8'), formatLockFile(selfHolder()));
  t.same(readdirSync(dir), ['quill.pid'], 'no temporary file left behind');
  release();
  t.notOk(existsSync(path), 'released');
  const again = await lockDataDir(dir);
  writeFileSync(path, '1 1\n'); // someone replaced it (should not happen): not ours to remove
  again();
  t.equal(readFileSync(path, 'utf8'), '1 1\n');
});

t.test('lockDataDir takes over stale locks at once', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'quill.pid');
  const unrelated = sleeper(t);
  await new Promise((r) => unrelated.once('spawn', r));
  const stale = [
    `${unrelated.pid}\n`, // bare pid, now an unrelated process (not node running main.js)
    `${unrelated.pid} 1\n`, // its pid with another start time
    '', // an empty file
    'garbage',
  ];
  if (!hasProc) stale.splice(0, 2);
  for (const content of stale) {
    writeFileSync(path, content);
    const waits: LockHolder[] = [];
    const takeovers: (LockHolder | null)[] = [];
    const release = await lockDataDir(dir, { waitMs: 60_000, onWait: (h) => waits.push(h), onTakeover: (h) => takeovers.push(h) });
    t.same(waits, [], `${JSON.stringify(content)}: no wait`);
    t.same(takeovers, [parseLockFile(content)], `${JSON.stringify(content)}: taken over`);
    t.equal(readFileSync(path, 'utf8'), formatLockFile(selfHolder()));
    release();
  }
  t.same(readdirSync(dir), [], 'nothing left behind');
});

t.test('lockDataDir waits for a genuine holder, then refuses; or takes the lock when it exits', { skip: !hasProc && 'no /proc' }, async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'quill.pid');
  const holder = sleeper(t);
  await new Promise((r) => holder.once('spawn', r));
  const start = parseProcStat(readFileSync(`/proc/${holder.pid}/stat`, 'utf8'))!.startTime;
  writeFileSync(path, `${holder.pid} ${start}\n`);

  const waits: LockHolder[] = [];
  await t.rejects(lockDataDir(dir, { waitMs: 300, pollMs: 20, onWait: (h) => waits.push(h) }),
    new RegExp(`^data directory ${dir} is in use by another Quill process \\(pid ${holder.pid}\\)$`));
  t.same(waits, [{ pid: holder.pid, startTime: start }], 'said once that it waits');
  t.equal(readFileSync(path, 'utf8'), `${holder.pid} ${start}\n`, 'the holder keeps its lock');

  const exited = new Promise((r) => holder.once('exit', r));
  const locking = lockDataDir(dir, { waitMs: 60_000, pollMs: 20, onWait: (h) => waits.push(h) });
  setTimeout(() => holder.kill('SIGKILL'), 200);
  const release = await locking;
  await exited;
  t.equal(waits.length, 2, 'it waited');
  t.equal(readFileSync(path, 'utf8'), formatLockFile(selfHolder()), 'and took the lock once the holder was gone');
  release();
});

t.test('a stale lock replaced by a concurrent start between the look and the removal is left to its new holder', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'quill.pid');
  writeFileSync(path, '100 1\n');
  const base = fakeProc({ 200: { start: '2', args: ['node', 'dist/src/main.js'] } });
  let raced = false;
  const proc: ProcSource = {
    ...base,
    alive: (pid) => {
      if (pid === 100 && !raced) {
        // While this start judges pid 100's lock stale, another start takes it over and writes its own.
        raced = true;
        writeFileSync(`${path}.other`, '200 2\n');
        renameSync(`${path}.other`, path);
      }
      return base.alive(pid);
    },
  };
  await t.rejects(lockDataDir(dir, { waitMs: 0, proc }), /in use by another Quill process \(pid 200\)/);
  t.ok(raced);
  t.equal(readFileSync(path, 'utf8'), '200 2\n', 'the new holder keeps its lock');
  t.same(readdirSync(dir), ['quill.pid'], 'nothing left behind');
});

t.test('an empty lock (one being written where there are no hard links) gets a poll interval to be completed', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'quill.pid');
  writeFileSync(path, '');
  setTimeout(() => writeFileSync(path, '200 2\n'), 20);
  const proc = fakeProc({ 200: { start: '2', args: ['node', 'dist/src/main.js'] } });
  await t.rejects(lockDataDir(dir, { waitMs: 0, pollMs: 500, proc }), /in use by another Quill process \(pid 200\)/);
  t.equal(readFileSync(path, 'utf8'), '200 2\n');
});

const child = fileURLToPath(new URL('../../fixtures/data-dir-lock-child.ts', import.meta.url));
const loaderArgs = TYPESCRIPT_LOADER_ARGS;

t.test('racing starts on a stale lock: exactly one wins', async (t) => {
  if (loaderArgs.length === 0) return void t.fail('no TypeScript loader in execArgv: run this file under tap');
  const RACERS = 6;
  for (const initial of [null, `${process.pid} 1\n`]) {
    const dir = tempDir(t);
    if (initial !== null) writeFileSync(join(dir, 'quill.pid'), initial);
    const startAt = Date.now() + 3_000; // after every racer has loaded
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const racers = Array.from({ length: RACERS }, () => spawn(process.execPath, [...loaderArgs, child, dir, String(startAt)], { env, stdio: ['pipe', 'pipe', 'inherit'] }));
    t.teardown(() => racers.forEach((r) => r.kill('SIGKILL')));
    const answers = await Promise.all(racers.map((r) => new Promise<string>((resolve) => {
      createInterface({ input: r.stdout! }).once('line', resolve);
      r.once('exit', () => resolve('exited without answering'));
    })));
    const winners = racers.filter((_, i) => answers[i] === 'won');
    t.equal(winners.length, 1, `${JSON.stringify(initial)}: one winner (${answers.join('; ')})`);
    for (const a of answers.filter((a) => a !== 'won')) t.match(a, /^lost data directory .* is in use by another Quill process \(pid \d+\)$/);
    t.equal(readFileSync(join(dir, 'quill.pid'), 'utf8').split(' ')[0], String(winners[0]?.pid), 'the lock names the winner');
    await Promise.all(racers.map((r) => new Promise((resolve) => {
      if (r.exitCode !== null) return resolve(null);
      r.once('exit', resolve);
      r.stdin!.end();
    })));
    t.same(readdirSync(dir), [], 'the winner released it; nothing left behind');
  }
});
