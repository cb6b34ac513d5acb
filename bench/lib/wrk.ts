/**
 * Driving load with wrk (C, one thread): on 2 cores the generator competes with the server for CPU, and wrk is
 * the cheapest generator available. Scripts are assembled from bench/lua/*.lua behind a generated `CONFIG`
 * table; `report.lua` prints the figures as JSON.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LUA_DIR } from './paths.js';
import type { LoadResult, LoadRun } from './load.js';
import { CpuSampler, round2 } from './proc-stats.js';

/** Finds wrk; installs it with apt-get when running as root (the CI and dev machines are Debian, user root). */
export function ensureWrk(log: (msg: string) => void): string | null {
  const find = () => {
    try {
      return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || null;
    } catch {
      return null;
    }
  };
  const found = find();
  if (found || process.getuid?.() !== 0) return found;
  log('wrk not found; installing it with apt-get (root)');
  const apt = (args: string[]) => execFileSync('apt-get', args, { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 180_000 });
  try {
    apt(['install', '-y', 'wrk']);
  } catch {
    try {
      apt(['update']);
      apt(['install', '-y', 'wrk']);
    } catch {
      /* fall through: the caller falls back to autocannon */
    }
  }
  return find();
}

export function wrkVersion(wrk: string): string {
  try {
    execFileSync(wrk, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    // wrk prints its version and usage, then exits 1.
    const out = String((error as { stdout?: string }).stdout ?? '');
    return /wrk\s+(\S+)/.exec(out)?.[1] ?? 'unknown';
  }
  return 'unknown';
}

/** A Lua literal for plain data (strings in long brackets: bodies are JSON full of quotes). */
function lua(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') {
    let eq = '=';
    while (value.includes(`]${eq}]`)) eq += '=';
    // A long bracket drops a newline right after the opening; a leading newline would be lost.
    return `[${eq}[${value.startsWith('\n') ? '\n' : ''}${value}]${eq}]`;
  }
  if (Array.isArray(value)) return `{${value.map(lua).join(',')}}`;
  return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `[ ${lua(k)} ]=${lua(v)}`).join(',')}}`;
}

export interface WrkScript {
  /** Script files from bench/lua, in order (report.lua is added last). */
  files: string[];
  config: Record<string, unknown>;
}

export async function runWrk(wrk: string, url: string, run: LoadRun, script: WrkScript): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'quill-bench-wrk-'));
  const file = join(dir, 'script.lua');
  const source = [`CONFIG = ${lua({ seed: Math.floor(Math.random() * 2 ** 31), ...script.config })}`,
    `math.randomseed(CONFIG.seed)`,
    ...[...script.files, 'report.lua'].map((f) => readFileSync(join(LUA_DIR, f), 'utf8'))].join('\n');
  writeFileSync(file, source);
  try {
    const args = ['-t', '1', '-c', String(run.connections), '-d', `${run.durationS}s`, '--timeout', `${run.timeoutS ?? 30}s`, '-s', file, url];
    const proc = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    // CPU is sampled inside the run (after connections are up, before wrk winds down), so the figures describe
    // the steady state and wrk is still alive to be read.
    const sampler = run.sample ? new CpuSampler({ ...run.sample.pids, wrk: proc.pid! }, run.sample.serverPid) : null;
    const windowMs = Math.max(500, run.durationS * 1000 - 1000);
    const cpu = sampler
      ? new Promise<ReturnType<CpuSampler['stop']>>((resolve) => {
        setTimeout(() => {
          sampler.start();
          setTimeout(() => resolve(sampler.stop()), windowMs - 500);
        }, 500);
      })
      : Promise.resolve(null);
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    const m = /WRK_JSON (\{.*\})/.exec(out);
    if (code !== 0 || !m) throw new Error(`wrk failed (exit ${code}):\n${out}`);
    const r = JSON.parse(m[1]!) as Record<string, number>;
    const seconds = r.duration_us! / 1e6;
    return {
      tool: 'wrk',
      connections: run.connections,
      duration_s: round2(seconds),
      requests: r.requests!,
      requests_s: Math.round(r.requests! / seconds),
      p50_ms: round2(r.p50_us! / 1000),
      p90_ms: round2(r.p90_us! / 1000),
      p99_ms: round2(r.p99_us! / 1000),
      max_ms: round2(r.max_us! / 1000),
      non_2xx: r.status_errors!,
      socket_errors: r.connect_errors! + r.read_errors! + r.write_errors! + r.timeouts!,
      cpu: await cpu,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
