/** Where and on what the figures were measured. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { loadAverage } from './proc-stats.js';
import { ROOT } from './paths.js';

export interface Machine {
  cpu_model: string;
  cores: number;
  ram_gb: number;
  node: string;
  kernel: string;
  loadavg_at_start: [number, number, number];
}

export function machine(): Machine {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? model;
  } catch {
    /* not Linux */
  }
  return {
    cpu_model: model,
    cores: cpus().length,
    ram_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
    loadavg_at_start: loadAverage(),
  };
}

/** Short commit hash, and whether the work tree had uncommitted changes (read-only git commands). */
export function commit(): { commit: string; dirty: boolean } {
  const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return { commit: git(['rev-parse', '--short', 'HEAD']), dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '' };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}
