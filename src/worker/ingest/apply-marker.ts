/**
 * The apply's crash marker: which log records a shard is applying, written before each chunk, so that a record
 * that kills the process (or its thread) while it is applied is not retried blindly at every start.
 *
 * The apply bounds what it can (src/worker/ingest/apply-budget.ts: time and memory per chunk, inside the per-event
 * loops), but a fault nothing in JavaScript can catch (a native abort, an out-of-memory kill) ends the process in
 * the middle of a chunk, and the replay brings the same records back. So before every chunk the shard writes the
 * range of log positions the chunk covers per source log and how often these records were already being applied
 * when the process died (`attempts`). At start-up (`read`), a marker whose records were not applied names the
 * suspects (positions at or before what was applied were committed: the replay skips them anyway). The apply then
 * gives them three chances, each narrower (src/worker/ingest/shard.ts `suspectPlan`):
 *
 *   attempts 0 → applied as usual, in a chunk with the marker at attempts 1 (most kills are not the record's fault);
 *   attempts 1 → each suspect record alone, the marker at attempts 2 naming just that record;
 *   attempts 2 → that record is set aside in the dead-letter store without being applied.
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
  attempts: number;
  ranges: MarkedRanges;
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
