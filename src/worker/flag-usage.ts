/**
 * How often each flag is evaluated, per day, and when it last was: counted in this worker's memory and written in
 * one metadata transaction every few seconds, so the flag hot path (`/flags/`, `/decide/`, OFREP) never writes.
 *
 * Noting an answer costs one array increment and one store per flag it holds: the counters are typed arrays
 * indexed like the compiled flag set the answer came from (`CompiledFlag.index`), kept beside the set. A set is
 * replaced when its project's flags change; the old set's counters are written by the next flush and dropped.
 * `$feature_flag_called` events (what an SDK sends when code reads a flag, local evaluation included) are counted
 * apart, as `called`, when capture accepts them.
 *
 * Stored: `flag_usage` [project, flag id, day (UTC, YYYY-MM-DD)] → {evaluations, called}, and `flag_last_called`
 * [project, flag id] → epoch ms (src/stores/meta/meta-store.ts). A SIGKILL loses at most one flush interval of counts.
 */
import type { CompiledFlagSet, FlagResult } from '../domain/flags/index.js';
import type { MetaStore } from '../stores/meta/meta-store.js';
import type { PeerHandler, WorkerRuntime } from './runtime.js';

/** How often each worker writes what it counted. */
export const USAGE_FLUSH_MS = 5_000;

interface SetCounters {
  projectId: number;
  set: CompiledFlagSet;
  evaluations: Float64Array;
  called: Float64Array;
  /** Epoch ms of the last evaluation (or event) of each flag; 0: none since the last flush. */
  last: Float64Array;
}

export interface UsageRow {
  projectId: number;
  flagId: number;
  day: string;
  evaluations: number;
  called: number;
  lastAt: number;
}

export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class FlagUsage {
  private bySet = new Map<CompiledFlagSet, SetCounters>();
  private lastSet: CompiledFlagSet | null = null;
  private lastCounters: SetCounters | null = null;

  private countersOf(projectId: number, set: CompiledFlagSet): SetCounters {
    if (set === this.lastSet) return this.lastCounters!;
    let c = this.bySet.get(set);
    if (c === undefined) {
      const n = set.flags.length;
      c = { projectId, set, evaluations: new Float64Array(n), called: new Float64Array(n), last: new Float64Array(n) };
      this.bySet.set(set, c);
    }
    this.lastSet = set;
    this.lastCounters = c;
    return c;
  }

  /** The flags of one answer were evaluated at `now`. */
  noteResults(projectId: number, set: CompiledFlagSet, results: readonly FlagResult[], now: number): void {
    const c = this.countersOf(projectId, set);
    const evaluations = c.evaluations;
    const last = c.last;
    for (let i = 0; i < results.length; i++) {
      const index = results[i]!.flag.index;
      evaluations[index]!++;
      last[index] = now;
    }
  }

  /** A `$feature_flag_called` event named `key` (unknown keys are not counted). */
  noteCalled(projectId: number, set: CompiledFlagSet, key: string, now: number): void {
    const flag = set.byKey.get(key);
    if (flag === undefined) return;
    const c = this.countersOf(projectId, set);
    c.called[flag.index]!++;
    if (now > c.last[flag.index]!) c.last[flag.index] = now;
  }

  /** What was counted since the last call, as rows to add; the counters start again from zero. */
  take(): UsageRow[] {
    const taken = this.bySet;
    this.bySet = new Map();
    this.lastSet = null;
    this.lastCounters = null;
    const rows: UsageRow[] = [];
    for (const c of taken.values()) {
      for (let i = 0; i < c.set.flags.length; i++) {
        const evaluations = c.evaluations[i]!;
        const called = c.called[i]!;
        if (evaluations === 0 && called === 0) continue;
        const lastAt = c.last[i]!;
        rows.push({ projectId: c.projectId, flagId: c.set.flags[i]!.id, day: dayOf(lastAt), evaluations, called, lastAt });
      }
    }
    return rows;
  }

  get pending(): boolean {
    return this.bySet.size > 0;
  }
}

export interface DayUsage {
  evaluations: number;
  called: number;
}

/** Adds `rows` to the stored counts; only inside a metadata write. */
export function addUsage(meta: MetaStore, rows: readonly UsageRow[]): void {
  for (const r of rows) {
    const key: [number, number, string] = [r.projectId, r.flagId, r.day];
    const before = meta.flagUsage.get(key);
    meta.flagUsage.put(key, { evaluations: (before?.evaluations ?? 0) + r.evaluations, called: (before?.called ?? 0) + r.called });
    const last = meta.flagLastCalled.get([r.projectId, r.flagId]) ?? 0;
    if (r.lastAt > last) meta.flagLastCalled.put([r.projectId, r.flagId], r.lastAt);
  }
}

/** The peer message asking a worker to write its counts now (read-your-writes for the usage and list APIs). */
export const FLAG_USAGE_FLUSH = 'flag-usage.flush';

/**
 * Writes this worker's counts every USAGE_FLUSH_MS, one metadata transaction each time; at most one write in
 * flight, so a slow disk makes flushes larger, never more numerous.
 */
export class UsageFlusher {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly rt: WorkerRuntime) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), USAGE_FLUSH_MS);
    this.timer.unref();
  }

  flush(): Promise<void> {
    this.writing = this.writing.then(async () => {
      if (!this.rt.flagUsage.pending) return;
      const rows = this.rt.flagUsage.take();
      if (rows.length === 0) return;
      try {
        await this.rt.meta.write(() => addUsage(this.rt.meta, rows));
      } catch (error) {
        this.rt.log.warn({ event: 'flag_usage_failed', err: error }, 'writing flag usage counts failed; they are dropped');
      }
    });
    return this.writing;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}

export const flagUsageFlushHandler: PeerHandler = async (rt) => {
  await rt.flagUsageFlusher.flush();
  return true;
};

/**
 * How long a flags API request waits for the other workers' counts. A worker held in long synchronous work (the
 * watchdog's stalled worker) must not hold the flags list with it: past this, the answer shows the counts as last
 * flushed (at most USAGE_FLUSH_MS old), and the flush asked for still lands later.
 */
const FLUSH_WAIT_MS = 500;

/** Every worker writes what it counted (waiting at most FLUSH_WAIT_MS), then this one reads the committed state. */
export async function flushUsageEverywhere(rt: WorkerRuntime): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const flushed = rt.peers.all({ kind: FLAG_USAGE_FLUSH }).catch((error: unknown) => {
    rt.log.warn({ event: 'flag_usage_flush_failed', err: error }, 'a worker did not flush its flag usage counts');
  });
  await Promise.race([flushed, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_WAIT_MS)))]);
  clearTimeout(timer);
  rt.meta.env.resetReadTxn();
}
