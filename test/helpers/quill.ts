/**
 * Starts the real Quill server (the built `dist/src/main.js`, as `npm start` runs it) in a child process on a free
 * port and a fresh data directory, and gives tests a small HTTP client for it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
export const MAIN = join(ROOT, 'dist/src/main.js');

export const PROJECT_KEY = 'phc_testprojectkey0000000000000000000000000000';
export const PERSONAL_KEY = 'phx_testpersonalkey000000000000000000000000000';

export interface QuillProcess {
  base: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  output: () => string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  dataDir?: string;
  workers?: number;
  env?: Record<string, string>;
  /** Sees the server's output as it arrives, from the start (before it listens). */
  onOutput?: (chunk: string) => void;
}

/**
 * Servers this test process started and that still run. When the test process ends (tap's timeout sends it SIGTERM,
 * a failed assertion can skip a teardown) they are killed with it: left running they were re-parented to init and
 * kept serving, and a suite that timed out under load left dozens of them taking the CPU of the files after it.
 */
const running = new Set<ChildProcess>();
function killRunning(): void {
  for (const proc of running) proc.kill('SIGKILL');
  running.clear();
}
process.once('exit', killRunning);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killRunning();
    process.kill(process.pid, signal);
  });
}

/**
 * The NODE_OPTIONS a server gets: the test's own without tap's process-info hook, which tap hands every child to map
 * coverage (off here, package.json) and which made each server start about three times slower and each of its
 * threads load the hook.
 */
export const SERVER_NODE_OPTIONS = (process.env.NODE_OPTIONS ?? '')
  .split(' ')
  .filter((o) => o && !o.includes('@tapjs/processinfo'))
  .join(' ');

/** `node dist/src/main.js` on `dataDir`, on a free port of 127.0.0.1, with the test keys. */
function spawnQuill(dataDir: string, opts: StartOptions): ChildProcess {
  const proc = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_OPTIONS: SERVER_NODE_OPTIONS,
      QUILL_HOST: '127.0.0.1',
      QUILL_PORT: '0',
      QUILL_DATA_DIR: dataDir,
      QUILL_WORKERS: String(opts.workers ?? 2),
      QUILL_PROJECT_API_KEY: PROJECT_KEY,
      QUILL_PERSONAL_API_KEY: PERSONAL_KEY,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  return proc;
}

export interface Ending {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/**
 * Runs a Quill that is expected to end on its own (a refused start) and resolves with how it ended. One still
 * running after `timeoutMs` is killed, and resolves as killed by SIGKILL with a line saying so.
 */
export function runToEnd(opts: StartOptions & { dataDir: string; timeoutMs?: number }): Promise<Ending> {
  const proc = spawnQuill(opts.dataDir, opts);
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const timer = setTimeout(() => {
    output += `\n[test] still running after ${opts.timeoutMs ?? 60_000} ms: killed\n`;
    proc.kill('SIGKILL');
  }, opts.timeoutMs ?? 60_000);
  return new Promise((resolve) =>
    proc.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    }),
  );
}

/**
 * How long a start may take before the server is taken as hung. A start on an idle machine takes about a second;
 * with the suite's other files starting servers and soaks beside them it took over 30 s, which is slow, not hung.
 */
const START_TIMEOUT_MS = 120_000;

export async function startQuill(opts: StartOptions = {}): Promise<QuillProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'quill-test-'));
  const proc = spawnQuill(dataDir, opts);
  let out = '';
  const take = (d: Buffer) => {
    out += d;
    opts.onOutput?.(String(d));
  };
  proc.stdout!.on('data', take);
  proc.stderr!.on('data', take);
  const port = await new Promise<number>((resolvePort, reject) => {
    // One that never says it listens is killed: left running, it would keep the test's process alive to tap's timeout.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`Quill did not start within ${START_TIMEOUT_MS} ms:\n${out}`));
    }, START_TIMEOUT_MS);
    const onData = () => {
      const m = /Quill listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        resolvePort(Number(m[1]));
      }
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`Quill exited with ${code ?? `signal ${signal}`} before listening:\n${out}`));
    });
  });
  let stopping = false;
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code, signal) => {
      // A server that dies under a test is the failure to explain: show what it printed.
      if (!stopping) console.error(`Quill exited unexpectedly (code ${code}, signal ${signal}). Its output:\n${out}`);
      r(code);
    }),
  );
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    proc,
    output: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      stopping = true;
      proc.kill(signal);
      return exited;
    },
  };
}

/** The JSON log lines a server printed (src/observability/logger.ts), in order; other lines are skipped. */
export function logLines(output: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      /* a line cut by the end of the output so far */
    }
  }
  return lines;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface HttpResult<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/** A tiny client: JSON in, JSON (or text) out, the personal key as Bearer unless told otherwise. */
export class Client {
  constructor(readonly base: string, readonly key: string | null = PERSONAL_KEY) {}

  withKey(key: string | null): Client {
    return new Client(this.base, key);
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.key && !('authorization' in h)) h.authorization = `Bearer ${this.key}`;
    let payload: string | Uint8Array | undefined;
    if (body instanceof Uint8Array || typeof body === 'string') payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.base + path, { method, headers: h, body: payload });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  }

  get = <T = any>(path: string, headers?: Record<string, string>) => this.request<T>('GET', path, undefined, headers);
  post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => this.request<T>('POST', path, body, headers);
  patch = <T = any>(path: string, body?: unknown) => this.request<T>('PATCH', path, body);
  delete = <T = any>(path: string) => this.request<T>('DELETE', path);
}

/**
 * One Quill for a whole test file: started before the first subtest, stopped and its data directory removed after
 * the last. Set QUILL_TEST_DUMP=1 to print the server's output at the end (debugging a failure).
 */
export function quillForFile(
  t: { before(fn: () => Promise<void>): void; teardown(fn: () => Promise<void>): void },
  opts: StartOptions = {},
): { q: QuillProcess; api: Client } {
  const server = {} as { q: QuillProcess; api: Client };
  t.before(async () => {
    server.q = await startQuill(opts);
    server.api = new Client(server.q.base);
  });
  t.teardown(async () => {
    if (!server.q) return; // start-up failed: t.before already reported it
    if (process.env.QUILL_TEST_DUMP) console.error(server.q.output());
    await server.q.stop();
    removeDir(server.q.dataDir);
  });
  return server;
}
