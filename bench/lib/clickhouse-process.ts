/**
 * A ClickHouse to export to, for tests and benchmarks: chdb behind ClickHouse's HTTP interface
 * (bench/lib/clickhouse-shim.ts) in a child process, so Quill reaches it over HTTP exactly as it would reach a
 * server, and a test can stop it (ClickHouse unavailable) and start it again on the same data and port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A built script of bench/lib: beside this file in dist/, or in dist/ when a test imports this file from its source. */
const built = (name: string) => fileURLToPath(new URL(import.meta.url.includes('/dist/') ? `./${name}` : `../../dist/bench/lib/${name}`, import.meta.url));
const SHIM = built('clickhouse-shim.js');
/** A stand-in that keeps nothing (bench/lib/discard-clickhouse.ts): the export's cost to Quill alone. */
export const DISCARD = built('discard-clickhouse.js');

export class ClickHouseProcess {
  private proc: ChildProcess | null = null;
  port = 0;
  /** What the shim printed (its errors, if it died). */
  output = '';

  constructor(readonly dataDir: string, private readonly script = SHIM) {}

  /** The process id while it runs (0 otherwise). */
  get pid(): number {
    return this.proc?.pid ?? 0;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it (on the port it had before, if it ran). */
  async start(): Promise<void> {
    const proc = spawn(process.execPath, [this.script, this.dataDir, String(this.port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (this.output += d));
    proc.stderr!.on('data', (d: Buffer) => (this.output += d));
    proc.once('exit', (code, signal) => {
      if (this.proc === proc) this.output += `\n[exited: ${code ?? signal}]\n`;
    });
    this.port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the ClickHouse shim did not start:\n${out}`)), 30_000);
      const take = (d: Buffer) => {
        out += d;
        const m = /listening (\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      proc.stdout!.on('data', take);
      proc.stderr!.on('data', (d: Buffer) => (out += d));
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the ClickHouse shim exited (${code}):\n${out}`));
      });
    });
  }

  /** Stops it; SIGKILL by default (ClickHouse lost, not shut down). */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill(signal);
    await exited;
    this.proc = null;
  }

  /** Rows of a query, as objects (JSONEachRow). */
  async query<T = Record<string, unknown>>(sql: string, database = 'default'): Promise<T[]> {
    const res = await fetch(`${this.url}/?database=${database}&default_format=JSONEachRow`, { method: 'POST', body: sql });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`ClickHouse: ${text}`);
    return text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as T);
  }
}
