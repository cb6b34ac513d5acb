/**
 * The apply's crash marker: which log records a shard is applying, written before each chunk, so that a record
 * that kills the process (or its thread) while it is applied is not retried blindly at every start.
 *
 * The apply bounds what it can (src/worker/ingest/apply-budget.ts: time and memory per chunk, inside the per-event
 * loops), but a fault nothing in JavaScript can catch (a native abort, an out-of-memory kill) ends the process in
 * the middle of a chunk, and the replay brings the same records back. So before every chunk the shard writes the
 * range of log positions the chunk covers per source log and how often these records were already being applied
 * when the process died (`attempts`). At start-up (`read`), a marker whose records were not applied names the
 * suspects (positions at or before what was applied were committed: the replay skips them anyway), and
 * `suspectTreatment` says what is done with them:
 *
 *   attempts 0 → applied as usual, in a chunk with the marker at attempts 1 (most kills are not the record's fault);
 *   attempts 1-3 → each suspect record alone, the marker naming just that record;
 *   attempts 4 → that record is set aside in the dead-letter store without being applied.
 *
 * A death is counted against a record applied alone only if it came while the record's own code ran: decoding it,
 * processing its persons, building its rows (`aloneMarks`: the marker says `working` then). While that record
 * waits (for its commits' fdatasync, for a metadata write) the marker says `waiting`, and a death there counts
 * only in `waits`. A kill from outside (an operator, an orchestrator, the crash soak) is as likely to land anywhere;
 * counted against whatever record was alone, it set an innocent, acknowledged record aside: the 3,000-round crash
 * soak of 2026-12-03 lost 5 acknowledged events that way, when two of its kills landed in one record's turns. The
 * record's own code takes about a millisecond, the fdatasyncs around it up to hundreds: three chance kills in
 * that millisecond are what it now takes. `waits` is bounded too (WAIT_DEATHS), so that a commit that kills the
 * process every time cannot loop for ever.
 *
 * The marker is one 512-byte write at offset 0 of a small file, not synced: what it guards against is the process
 * dying, which leaves the page cache intact (stack-notes §1g); a power loss that loses it costs one more attempt.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const FILE = 'applying.json';
const SIZE = 512;

/** Per source shard, the first and last record end a chunk covers. */
export type MarkedRanges = Record<string, [number, number]>;

export interface ApplyMark {
  /** Deaths these records were already present at (a chunk's, then their own alone), counting a death now. */
  attempts: number;
  ranges: MarkedRanges;
  /** For a record applied alone: deaths while it waited (its code not running), counting a death now. */
  waits?: number;
}

/** Deaths while its own code ran alone after which a record is set aside (the attempts 2, 3 and 4). */
export const OWN_DEATHS = 3;
/** Deaths while a record applied alone waited for its commits after which it is set aside all the same. */
export const WAIT_DEATHS = 10;

/** What the apply does with the suspects a marker names at start-up. */
export function suspectTreatment(mark: ApplyMark): 'again' | 'alone' | 'set-aside' {
  if (mark.attempts >= 1 + OWN_DEATHS || (mark.waits ?? 0) >= WAIT_DEATHS) return 'set-aside';
  return mark.attempts >= 1 ? 'alone' : 'again';
}

/**
 * The two marks of a suspect record applied alone (`suspect`: what the marker said at start-up): `working` while
 * its own code runs (a death counts against it), `waiting` otherwise (a death counts only in `waits`).
 */
export function aloneMarks(suspect: ApplyMark, ranges: MarkedRanges): { working: ApplyMark; waiting: ApplyMark } {
  const waits = suspect.waits ?? 0;
  return {
    working: { attempts: suspect.attempts + 1, ranges, waits },
    waiting: { attempts: suspect.attempts, ranges, waits: waits + 1 },
  };
}

/** How many times the process died applying a record set aside by `suspectTreatment`. */
export function deathsOf(suspect: ApplyMark): { deaths: number; own: number } {
  return { deaths: suspect.attempts + 1 + (suspect.waits ?? 0), own: Math.max(0, suspect.attempts - 1) };
}

/** Whether a record (its source and end position) lies in a marked range. */
export function inRanges(ranges: MarkedRanges, source: number, end: number): boolean {
  const r = ranges[source];
  return r !== undefined && end >= r[0] && end <= r[1];
}

export class ApplyMarker {
  private readonly fd: number;
  private readonly buffer = Buffer.alloc(SIZE);

  private constructor(path: string) {
    closeSync(openSync(path, 'a')); // created if absent
    this.fd = openSync(path, 'r+'); // positional writes: with O_APPEND Linux would ignore the position
  }

  /** Opens the marker of a shard directory, with what it said when the shard was last applying (null: nothing). */
  static open(dir: string): { marker: ApplyMarker; last: ApplyMark | null } {
    const path = join(dir, FILE);
    let last: ApplyMark | null = null;
    try {
      const text = readFileSync(path, 'utf8').trim();
      if (text !== '') {
        const parsed = JSON.parse(text) as ApplyMark;
        if (typeof parsed.attempts === 'number' && parsed.ranges && typeof parsed.ranges === 'object') last = parsed;
      }
    } catch {
      // No marker yet, or a torn one: nothing is suspect.
    }
    return { marker: new ApplyMarker(path), last };
  }

  /** Marks the records a chunk is about to apply (one positional write, no sync). */
  mark(mark: ApplyMark): void {
    const text = JSON.stringify(mark);
    // A chunk covers at most one range per source shard, so this stays far under SIZE; if it did not, the marker is
    // cleared rather than torn (a lost mark costs one more blind attempt, never a wrong one).
    const bytes = Buffer.byteLength(text) <= SIZE ? text : '';
    this.buffer.fill(0x20);
    this.buffer.write(bytes, 0, 'utf8');
    writeSync(this.fd, this.buffer, 0, SIZE, 0);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The ranges a chunk of parts covers, per source (parts of one source are queued in log order). */
export function rangesOf(parts: readonly { source: number; end: number }[]): MarkedRanges {
  const ranges: MarkedRanges = {};
  for (const { source, end } of parts) {
    const r = ranges[source];
    if (!r) ranges[source] = [end, end];
    else {
      if (end < r[0]) r[0] = end;
      if (end > r[1]) r[1] = end;
    }
  }
  return ranges;
}
