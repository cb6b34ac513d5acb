/**
 * What a case costs besides time: resident memory and data on disk after it, and who used the CPU during it
 * (per process, per thread of the server, and everything else on the machine — the "was it busy?" check).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ on Linux

function statusKb(pid: number, field: string): number | null {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

const mb = (kb: number | null) => (kb === null ? null : round1(kb / 1024));

/** Resident memory (VmRSS), MB. */
export function rssMb(pid: number): number | null {
  return mb(statusKb(pid, 'VmRSS'));
}

/**
 * RSS split: anonymous (heaps, buffers) and file-backed. LMDB reads through a memory map, so the pages of the
 * data files a process touched count as file-backed RSS: reclaimable page cache, not memory the process holds.
 */
export function memoryMb(pid: number): { rss_mb: number | null; rss_anon_mb: number | null; rss_file_mb: number | null; peak_rss_mb: number | null } {
  return { rss_mb: rssMb(pid), rss_anon_mb: mb(statusKb(pid, 'RssAnon')), rss_file_mb: mb(statusKb(pid, 'RssFile')), peak_rss_mb: mb(statusKb(pid, 'VmHWM')) };
}

/** Disk usage like `du -sk` (allocated blocks), in MB; `paths` are relative to `dir`. */
export function duMb(dir: string, paths: string[] = ['.']): number {
  try {
    const out = execFileSync('du', ['-skc', ...paths], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const total = /(\d+)\s+total\s*$/.exec(out.trim());
    return total ? round1(Number(total[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

export function loadAverage(): [number, number, number] {
  const [a, b, c] = readFileSync('/proc/loadavg', 'utf8').split(' ').map(Number);
  return [a!, b!, c!];
}

/** utime + stime in ticks from a /proc stat line (the command name may contain spaces and parentheses). */
function ticksOf(statLine: string): number {
  const rest = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11]) + Number(rest[12]);
}

function processTicks(pid: number): number | null {
  try {
    return ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** CPU seconds a process has used so far (every thread), or 0 if it is gone. */
export function serverCpuSeconds(pid: number): number {
  return (processTicks(pid) ?? 0) / TICKS_PER_S;
}

function threadTicks(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        out.set(Number(tid), ticksOf(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')));
      } catch {
        /* thread ended */
      }
    }
  } catch {
    /* process ended */
  }
  return out;
}

/**
 * Machine-wide ticks, all cores: time charged to processes (user, nice, system: comparable with the per-process
 * figures) and interrupt time (loopback networking runs largely in softirq and is charged to no process).
 */
function machineTicks(): { processes: number; interrupts: number; idle: number; iowait: number; steal: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return { processes: user! + nice! + system!, interrupts: irq! + softirq!, idle: idle!, iowait: iowait!, steal: steal ?? 0 };
}

export interface CpuUsage {
  /** Percent of one core, per named process. */
  processes: Record<string, number>;
  /** The server's busiest threads (percent of one core); the thread whose id is the pid is the main thread. */
  server_threads: { thread: string; pct: number }[];
  /** Percent of one core used by processes not named above (other engineers' tests, the OS). */
  others: number;
  /** Percent of one core spent in interrupts and softirqs (mostly the loopback network stack). */
  interrupts: number;
  /** Percent of one core left idle (the machine has 100 % per core); `iowait` is idle time with disk I/O pending. */
  idle: number;
  iowait: number;
  /** Percent of one core the hypervisor gave to other guests (this is a VM). */
  steal: number;
}

/**
 * Samples CPU time between `start` and `stop`. `server` is the process whose threads are broken down; `pids`
 * names every process we know of (server, load generator, this script).
 */
export class CpuSampler {
  private t0 = 0;
  private machine0 = { processes: 0, interrupts: 0, idle: 0, iowait: 0, steal: 0 };
  private readonly procs0 = new Map<string, number>();
  private threads0 = new Map<number, number>();

  constructor(private readonly pids: Record<string, number>, private readonly serverPid: number | null) {}

  start(): this {
    this.t0 = performance.now();
    this.machine0 = machineTicks();
    for (const [name, pid] of Object.entries(this.pids)) this.procs0.set(name, processTicks(pid) ?? 0);
    if (this.serverPid !== null) this.threads0 = threadTicks(this.serverPid);
    return this;
  }

  /** Adds a process that started after `start` (its whole CPU time counts). */
  add(name: string, pid: number): void {
    this.pids[name] = pid;
    this.procs0.set(name, 0);
  }

  stop(): CpuUsage {
    const seconds = (performance.now() - this.t0) / 1000;
    const pct = (ticks: number) => round1((ticks / TICKS_PER_S / seconds) * 100);
    const processes: Record<string, number> = {};
    let ours = 0;
    for (const [name, pid] of Object.entries(this.pids)) {
      const now = processTicks(pid);
      // A process that already exited (the load generator) is measured by its caller; count what we saw.
      const d = now === null ? 0 : now - (this.procs0.get(name) ?? 0);
      ours += d;
      processes[name] = pct(d);
    }
    const server_threads: CpuUsage['server_threads'] = [];
    if (this.serverPid !== null) {
      for (const [tid, ticks] of threadTicks(this.serverPid)) {
        const d = ticks - (this.threads0.get(tid) ?? 0);
        if (d <= 0) continue;
        server_threads.push({ thread: tid === this.serverPid ? 'main' : `tid ${tid}`, pct: pct(d) });
      }
      server_threads.sort((a, b) => b.pct - a.pct);
      server_threads.splice(5);
    }
    const machine = machineTicks();
    return {
      processes,
      server_threads,
      others: Math.max(0, pct(machine.processes - this.machine0.processes - ours)),
      interrupts: pct(machine.interrupts - this.machine0.interrupts),
      idle: pct(machine.idle - this.machine0.idle),
      iowait: pct(machine.iowait - this.machine0.iowait),
      steal: pct(machine.steal - this.machine0.steal),
    };
  }
}

/**
 * Waits (up to `maxMs`) until processes other than `ours` use less than `thresholdPct` of a core over a 1 s
 * window: other engineers' test runs come and go. Returns the last window's figure.
 */
export async function waitForQuiet(ours: number[], thresholdPct: number, maxMs: number): Promise<number> {
  const deadline = performance.now() + maxMs;
  for (;;) {
    const sampler = new CpuSampler(Object.fromEntries(ours.map((pid, i) => [`p${i}`, pid])), null).start();
    await new Promise((r) => setTimeout(r, 1000));
    const others = sampler.stop().others;
    if (others < thresholdPct || performance.now() > deadline) return others;
  }
}

export function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** The value at percentile `p` (0-100) of ascending `sorted` values (nearest rank, rounding down); NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
