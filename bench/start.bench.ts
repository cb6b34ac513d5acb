/**
 * What a start costs: a Quill on a fresh data directory (2 workers, as the tests start it) from spawn to listening,
 * the CPU its threads used by then (/proc/<pid>/stat: user + system of every thread), and the time from SIGTERM to
 * its exit; beside it, in alternation, the bare uWebSockets.js hello world started and stopped the same way (the
 * floor any Node process with uWS pays on this machine). The test suite starts Quill ~250 times, and a crashed worker's
 * replacement pays the worker's part of it, so this is a figure of its own (issue 54).
 *
 * `QUILL_BENCH_ROUNDS` (default 5) pairs; `node dist/bench/start.bench.js` prints one JSON document and writes
 * bench/results/start-latest.json (or QUILL_BENCH_OUT).
 */
import { readFileSync, rmSync } from 'node:fs';
import { publishResult } from './lib/results.js';
import { startHelloWorld, startQuill, type ServerProcess } from './lib/server-process.js';

const ROUNDS = Number(process.env.QUILL_BENCH_ROUNDS ?? 5);
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

const log = (msg: string) => process.stderr.write(`[start-bench] ${msg}\n`);

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // After the command name: field 14 (utime) and 15 (stime) of stat(5) are at 11 and 12 here.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

interface Round { to_listening_ms: number; cpu_at_listening_s: number; stop_ms: number }

async function measure(start: () => Promise<ServerProcess & { dataDir?: string }>): Promise<Round> {
  const t0 = performance.now();
  const server = await start();
  const listening = performance.now() - t0;
  const cpu = cpuSeconds(server.pid);
  const t1 = performance.now();
  await server.stop();
  const stop = performance.now() - t1;
  if (server.dataDir) rmSync(server.dataDir, { recursive: true, force: true });
  return { to_listening_ms: Math.round(listening), cpu_at_listening_s: cpu, stop_ms: Math.round(stop) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const summary = (rounds: Round[]) => ({
  to_listening_ms: median(rounds.map((r) => r.to_listening_ms)),
  cpu_at_listening_s: median(rounds.map((r) => r.cpu_at_listening_s)),
  stop_ms: median(rounds.map((r) => r.stop_ms)),
  rounds,
});

const quill: Round[] = [];
const hello: Round[] = [];
for (let i = 0; i < ROUNDS; i++) {
  hello.push(await measure(() => startHelloWorld()));
  quill.push(await measure(() => startQuill({ env: { QUILL_WORKERS: '2' } })));
  log(`round ${i + 1}: quill ${quill.at(-1)!.to_listening_ms} ms, ${quill.at(-1)!.cpu_at_listening_s} s CPU; hello ${hello.at(-1)!.to_listening_ms} ms`);
}
publishResult({
  bench: 'start', started_at: new Date().toISOString(), rounds: ROUNDS, workers: 2,
  baseline: { server: 'uWebSockets.js hello world, started and stopped the same way', ...summary(hello) },
  quill: summary(quill),
  notes: 'medians; CPU is every thread of the process up to the listening line (not the stop)',
}, 'start-latest.json', log);
