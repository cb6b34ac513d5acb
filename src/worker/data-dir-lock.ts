/**
 * One Quill process per data directory. Each ingest log must have exactly one writer: a second process appending
 * to the same log would silently overwrite acknowledged records.
 *
 * Node has no flock(2) or fcntl(2) locks (a kernel lock would die with its holder by itself), so the lock is a file,
 * `quill.pid`, that names its holder, and a starting Quill decides whether that holder still runs:
 *
 * - What it records: `<pid> <starttime>`, the holder's pid and its start time (field 22 of /proc/<pid>/stat: clock
 *   ticks since boot). A pid alone does not name a process: pids are reused, and in a container restarted after an
 *   OOM kill the small pids are handed out again, so the recorded one can belong to some other process (init, a
 *   shell, npm, a test runner) and a pid-only check refused to start, in a loop. A pid with its start time names one
 *   process instance.
 *   (The pid comes first so that a Quill from before this format, which reads the leading integer, still sees it.)
 * - When it is held: the recorded pid is alive (kill(pid, 0)), /proc/<pid>/stat shows the recorded start time, and
 *   the process is not a zombie (exited, only waiting to be reaped: it writes nothing). Anything else is stale and
 *   taken over. Without /proc (not Linux, or a process /proc does not show us) pid liveness decides, as before.
 * - An old file holding a bare pid (written before the start time was recorded): held when the pid is alive and,
 *   where /proc/<pid>/cmdline is readable, that process's command line runs a script named `main.js` (how Quill's
 *   server is started: `node dist/src/main.js` in the Dockerfile, deploy/quill.service and `npm start`). An
 *   unrelated process that reused the pid — a shell, init, npm, a test runner — does not, so the lock is stale.
 * - A genuine holder may be on its way out (a SIGKILLed Quill still unmapping its LMDB maps; one finishing its
 *   drain), so a start waits for it up to LOCK_WAIT_MS, looking every LOCK_POLL_MS, before refusing with
 *   "data directory … is in use by another Quill process".
 * - Writing: the content goes to a temporary file first, which is then hard-linked to `quill.pid`. link(2) fails
 *   with EEXIST when the name exists, so of two starting processes only one wins, and a reader never sees an empty
 *   or half-written lock (as it could between an exclusive create and the write). On a file system without hard
 *   links, an exclusive create (open O_EXCL) and a write instead; a lock that cannot be read as one is therefore
 *   given one poll interval to be completed before it is taken over.
 * - Taking over a stale file: it is renamed away (atomic), and the renamed file is checked to be the one judged
 *   stale (same content: the same dead holder). If a concurrent start replaced it in between, that lock is put back
 *   and judged again; otherwise the stale file is deleted and the exclusive link retried. (Still imperfect in one
 *   case: a third process starting in the instant the name is absent; Node offers nothing better without flock.)
 */
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a start waits for a genuine holder to exit before refusing. */
export const LOCK_WAIT_MS = 5_000;
/** How often it looks again while waiting. */
export const LOCK_POLL_MS = 100;
/** Stale files taken over, or locks vanishing under us, before giving up (a loop that should never run this long). */
const MAX_TAKEOVERS = 50;

export interface ProcStat {
  pid: number;
  /** Field 2, without its parentheses; may contain spaces and parentheses. */
  comm: string;
  /** Field 3: R, S, D, Z (zombie), X (dead), … */
  state: string;
  /** Field 22: the process's start time in clock ticks since boot, as decimal digits. */
  startTime: string;
}

/**
 * Parses /proc/<pid>/stat. Field 2, the command name, is in parentheses and may itself contain spaces and ')',
 * so the fields after it are found after the LAST ')'. Returns null for text that is not a stat line.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const rest = text.slice(close + 1).trim().split(/\s+/);
  // rest[0] is field 3 (state), so field N is rest[N - 3].
  const state = rest[0];
  const startTime = rest[22 - 3];
  if (!Number.isSafeInteger(pid) || pid <= 0 || !state || startTime === undefined || !/^\d+$/.test(startTime)) return null;
  return { pid, comm: text.slice(open + 1, close), state, startTime };
}

/** A lock file's content: `<pid> <starttime>`, or (written before the start time was recorded) `<pid>`. */
export interface LockHolder {
  pid: number;
  startTime: string | null;
}

export function parseLockFile(text: string): LockHolder | null {
  const m = /^\s*(\d+)(?:\s+(\d+))?\s*$/.exec(text);
  if (!m) return null;
  const pid = Number(m[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return { pid, startTime: m[2] ?? null };
}

export function formatLockFile(holder: LockHolder): string {
  return holder.startTime === null ? `${holder.pid}\n` : `${holder.pid} ${holder.startTime}\n`;
}

/** Where the process table is read; a parameter for the unit tests. */
export interface ProcSource {
  /** Whether /proc is there to ask at all. */
  available(): boolean;
  /** /proc/<pid>/stat's text, or null when it cannot be read (no such process, or hidden from us). */
  stat(pid: number): string | null;
  /** /proc/<pid>/cmdline's arguments, or null when it cannot be read. */
  cmdline(pid: number): string[] | null;
  /** kill(pid, 0): the pid exists (EPERM counts: it exists, it is someone else's). */
  alive(pid: number): boolean;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export const linuxProc: ProcSource = {
  available: () => existsSync('/proc/self/stat'),
  stat: (pid) => readOrNull(`/proc/${pid}/stat`),
  cmdline: (pid) => {
    const text = readOrNull(`/proc/${pid}/cmdline`);
    return text === null ? null : text.split('\0').filter((a) => a !== '');
  },
  alive: (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
};

/** This process as a lock holder: its pid and, where /proc shows it, its start time. */
export function selfHolder(proc: ProcSource = linuxProc): LockHolder {
  const stat = proc.available() ? proc.stat(process.pid) : null;
  return { pid: process.pid, startTime: (stat && parseProcStat(stat)?.startTime) ?? null };
}

/** A bare-pid lock's holder looked like Quill's server when its command line runs a script named main.js. */
function looksLikeQuillServer(args: string[]): boolean {
  return args.slice(1).some((a) => basename(a) === 'main.js');
}

/**
 * Whether the process a lock file names still holds it. `self` is this process: a lock naming our own pid is ours
 * from an earlier life of the pid (a container's PID 1 restarted), never another writer's.
 */
export function holderRuns(holder: LockHolder, proc: ProcSource = linuxProc, self: number = process.pid): boolean {
  if (holder.pid === self) return false;
  if (!proc.alive(holder.pid)) return false;
  if (!proc.available()) return true;
  const statText = proc.stat(holder.pid);
  const stat = statText === null ? null : parseProcStat(statText);
  if (stat && (stat.state === 'Z' || stat.state === 'X')) return false;
  if (holder.startTime !== null) {
    // Alive but /proc does not show it (hidepid): pid liveness decides.
    if (!stat) return true;
    return stat.startTime === holder.startTime;
  }
  const args = proc.cmdline(holder.pid);
  return args === null ? true : looksLikeQuillServer(args);
}

export interface LockOptions {
  waitMs?: number;
  pollMs?: number;
  proc?: ProcSource;
  /** Called once when a genuine holder makes this start wait. */
  onWait?: (holder: LockHolder) => void;
  /** Called when a stale lock is taken over: its content (null: unreadable as a lock). */
  onTakeover?: (stale: LockHolder | null) => void;
}

/**
 * Takes the data directory's lock, waiting up to `waitMs` for a genuine holder to exit. Resolves with the function
 * that releases it (removes the file if it is still ours); rejects with "… is in use by another Quill process (pid N)"
 * when a genuine holder keeps it.
 */
export async function lockDataDir(dataDir: string, opts: LockOptions = {}): Promise<() => void> {
  const { waitMs = LOCK_WAIT_MS, pollMs = LOCK_POLL_MS, proc = linuxProc, onWait, onTakeover } = opts;
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'quill.pid');
  const mine = formatLockFile(selfHolder(proc));
  const deadline = Date.now() + waitMs;
  let takeovers = 0;
  let waited = false;
  let unreadableSeen = false;
  for (;;) {
    if (createExclusive(dataDir, path, mine)) {
      return () => {
        if (readOrNull(path) === mine) rmSync(path, { force: true });
      };
    }
    const seen = readOrNull(path);
    if (seen === null) {
      // Released between our attempt and the read: try again.
      if (++takeovers > MAX_TAKEOVERS) break;
      continue;
    }
    const holder = parseLockFile(seen);
    if (holder && holderRuns(holder, proc)) {
      if (Date.now() >= deadline) {
        throw new Error(`data directory ${dataDir} is in use by another Quill process (pid ${holder.pid})`);
      }
      if (!waited) onWait?.(holder);
      waited = true;
      await sleep(pollMs);
      continue;
    }
    // Stale: no holder we can name (an unreadable or empty file), or one that no longer runs. An unreadable one
    // may be a lock being written where hard links are missing (see createExclusive): it gets one poll to be whole.
    if (holder === null && !unreadableSeen) {
      unreadableSeen = true;
      await sleep(pollMs);
      continue;
    }
    if (++takeovers > MAX_TAKEOVERS) break;
    if (removeIfUnchanged(dataDir, path, seen)) onTakeover?.(holder);
  }
  throw new Error(`could not lock data directory ${dataDir}`);
}

/** Writes `content` to a temporary file and links it to `path`; false when `path` exists. */
function createExclusive(dir: string, path: string, content: string): boolean {
  const tmp = join(dir, `.quill.pid.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  const fd = openSync(tmp, 'wx');
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
  } finally {
    rmSync(tmp, { force: true });
  }
  // A file system without hard links: create exclusively and write (a reader may see it empty for an instant).
  let direct: number;
  try {
    direct = openSync(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(direct, content);
    fsyncSync(direct);
  } finally {
    closeSync(direct);
  }
  return true;
}

/**
 * Removes the lock at `path` if it still says `stale`. It is renamed away first (atomic): if what was moved is not
 * the stale lock (a concurrent start took over first), it is linked back for the next round to judge. True when the
 * stale lock was removed.
 */
function removeIfUnchanged(dir: string, path: string, stale: string): boolean {
  const moved = join(dir, `.quill.pid.${process.pid}.${Math.random().toString(36).slice(2)}.stale`);
  try {
    renameSync(path, moved);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false; // someone else removed it
    throw error;
  }
  try {
    if (readOrNull(moved) === stale) return true;
    try {
      linkSync(moved, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return false;
  } finally {
    rmSync(moved, { force: true });
  }
}
