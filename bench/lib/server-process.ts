/**
 * The servers under test run as child processes (Quill exactly as `npm start` runs it, the hello-world baseline
 * beside it), so their CPU and memory can be read from /proc without the load generator or this script mixed in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERSONAL_KEY, PROJECT_KEY, QUILL_MAIN, HELLO_WORLD, ROOT } from './paths.js';

const OUTPUT_LIMIT = 256 * 1024;

/** Servers still running: stopped if the bench itself is interrupted, so no child outlives it. */
const live = new Set<ChildProcess>();
let interruptHooked = false;
function stopChildrenOnInterrupt(): void {
  if (interruptHooked) return;
  interruptHooked = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const child of live) child.kill('SIGTERM');
      process.exit(130);
    });
  }
  process.once('exit', () => {
    for (const child of live) child.kill('SIGTERM');
  });
}

export interface ServerProcess {
  name: string;
  pid: number;
  port: number;
  base: string;
  /** The last 256 KB the process printed (stdout and stderr). */
  output(): string;
  /** How it ended, if it did (`null` while running). */
  exit(): { code: number | null; signal: string | null } | null;
  stop(): Promise<number | null>;
}

async function startServer(name: string, script: string, env: Record<string, string>, listening: RegExp, nodeArgs: string[] = [], startTimeoutS = 30): Promise<ServerProcess> {
  const proc: ChildProcess = spawn(process.execPath, [...nodeArgs, script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  stopChildrenOnInterrupt();
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  // Bounded: a chatty server (debug logging) must not grow this process's memory during a long run.
  let out = '';
  const keep = (d: Buffer) => {
    out += d;
    if (out.length > OUTPUT_LIMIT * 2) out = out.slice(-OUTPUT_LIMIT);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  let ended: { code: number | null; signal: string | null } | null = null;
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code, signal) => {
    ended = { code, signal };
    resolve(code);
  }));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${startTimeoutS} s:\n${out}`)), startTimeoutS * 1000);
    const check = () => {
      const m = listening.exec(out.slice(0, 4096));
      if (!m) return;
      clearTimeout(timer);
      proc.stdout!.off('data', check);
      resolve(Number(m[1]));
    };
    proc.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${JSON.stringify(ended)}) before listening:\n${out}`));
    });
  });
  return {
    name,
    pid: proc.pid!,
    port,
    base: `http://127.0.0.1:${port}`,
    output: () => out.slice(-OUTPUT_LIMIT),
    exit: () => ended,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export interface QuillServer extends ServerProcess {
  dataDir: string;
  workers: number;
}

/**
 * Quill on a free port and a fresh data directory, with the fixed bench keys (like test/helpers/quill.ts).
 * `startTimeoutS`: how long the start may take (a forced scan-layout rebuild of millions of events runs before
 * listening); `nodeArgs`: extra node flags (e.g. --perf-basic-prof for bench:apply's perf recording).
 */
export async function startQuill(opts: { dataDir?: string; env?: Record<string, string>; startTimeoutS?: number; nodeArgs?: string[] } = {}): Promise<QuillServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'quill-bench-'));
  const server = await startServer('quill', QUILL_MAIN, {
    QUILL_HOST: '127.0.0.1',
    QUILL_PORT: '0',
    QUILL_DATA_DIR: dataDir,
    QUILL_PROJECT_API_KEY: PROJECT_KEY,
    QUILL_PERSONAL_API_KEY: PERSONAL_KEY,
    QUILL_LOG_LEVEL: 'silent',
    ...opts.env,
  }, /Quill listening on http:\/\/127\.0\.0\.1:(\d+)/, [...profileArgs(), ...(opts.nodeArgs ?? [])], opts.startTimeoutS);
  const workers = Number(/\((\d+) shard workers?/.exec(server.output())?.[1] ?? 0);
  return { ...server, dataDir, workers };
}

/**
 * QUILL_BENCH_PROFILE=<dir>: Quill runs with V8's CPU profiler, one `.cpuprofile` per thread (front and every
 * worker) written to <dir> when it stops. For finding where time goes; profiled figures are not comparable.
 */
function profileArgs(): string[] {
  const dir = process.env.QUILL_BENCH_PROFILE;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

export function startHelloWorld(): Promise<ServerProcess> {
  return startServer('hello-world', HELLO_WORLD, {}, /hello-world listening on 127\.0\.0\.1:(\d+)/);
}
