import { stat, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import { IngestLogClosedError, IngestLogCorruptError } from './errors.js';
import { encodeFrame } from './framing.js';
import { nodeIo, type LogIo, type SegmentFile } from './io.js';
import { comparePositions, type LogPosition } from './position.js';
import { ensureDir, listSegments, segmentPath } from './segment-files.js';
import { findValidEnd, scanSegment } from './segment-reader.js';
import { writeFully } from './write-fully.js';

export interface IngestLogOptions {
  /** Directory owned by exactly one IngestLog instance (one per shard). Created if missing. */
  dir: string;
  /** A new segment is started before a record that would push the active one past this size. Default 64 MiB. */
  segmentBytes?: number;
  /**
   * fdatasync every group before acknowledging it, and fsync the directory on segment creation. Default true.
   * `false` is only for tests and benchmarks: the log then survives a process kill (kernel page cache) but not power loss.
   */
  fsync?: boolean;
  /** Upper bound of one group commit, so one huge burst does not delay everyone behind it. Default 8 MiB. */
  maxGroupBytes?: number;
  /**
   * Zero-fill the active segment this many bytes ahead of the durable end (0 disables). Default 4 MiB.
   * Why: an fdatasync after an *appending* write must also commit the file-system journal (the file size changed),
   * and on a disk shared with LMDB that journal is busy; overwriting already allocated bytes makes most group
   * commits a pure data flush. The metadata cost is paid once per preallocated chunk instead of once per ack.
   */
  preallocateBytes?: number;
  /**
   * How many group commits may be syncing at once. Default 2. Why: an append that arrives while a sync is in flight
   * used to wait for that sync to end and then for its own (1.5 syncs on average); with a second sync started at
   * once it waits for one. fdatasyncs of one file overlap on this kind of disk: 2 in flight completed 1.5-1.7x as
   * many syncs per second as 1, at about the same latency (measured by `node dist/bench/ingest-log.bench.js`).
   */
  maxSyncsInFlight?: number;
  /** Where recovery messages go (bytes dropped from a torn tail). Default console.warn. */
  warn?: (message: string) => void;
  /** TEST SEAM: replace the file operations to inject ENOSPC/EIO. Production code leaves this unset. */
  io?: LogIo;
}

export interface IngestLogStats {
  segments: number;
  /** Durable bytes in all live segments. */
  bytes: number;
  /** Records made durable (acknowledged) since open. */
  appends: number;
  /** fdatasync calls that completed for group commits (0 with fsync: false). */
  syncs: number;
  /** Milliseconds spent waiting for those fdatasync calls (their average is the disk's flush latency). */
  syncMs: number;
  /** The longest of those fdatasync calls, in ms: a stall behind other writers to the disk shows here first. */
  syncMaxMs: number;
  /**
   * How those fdatasync calls were spread by duration: `counts[i]` took at most `boundsMs[i]` (and more than the
   * bound before it); the last count is everything longer than the last bound. Counters, so a reader takes the
   * difference of two snapshots to see one interval (the benchmarks do, per measured round).
   */
  syncLatency: { boundsMs: readonly number[]; counts: number[] };
  /** Group commits that succeeded (one write each), with or without fsync. */
  groups: number;
  /** Records rejected because their group's write/sync failed. */
  failedAppends: number;
}

/** What open() found in the last segment. */
export interface RecoveryReport {
  segment: number;
  /** Bytes cut off the end of the last segment (torn or corrupt tail). */
  truncatedBytes: number;
  /** Why the valid prefix ended, or null when the segment was clean. */
  reason: string | null;
}

export interface ReplayedRecord {
  /** View into a read chunk; valid indefinitely, but copy it if you retain many (each pins its chunk). */
  payload: Uint8Array;
  /** Position just after this record; use it as the checkpoint once the record is applied. */
  end: LogPosition;
}

interface Segment {
  readonly seq: number;
  readonly bytes: number;
}

interface Pending {
  readonly frame: Buffer;
  readonly resolve: (end: LogPosition) => void;
  readonly reject: (err: unknown) => void;
}

/** A group that was written to the active segment and is being (or was) synced; settled strictly in log order. */
interface Written {
  readonly group: Pending[];
  readonly seq: number;
  readonly start: number;
  readonly end: number;
  state: 'syncing' | 'synced' | 'failed';
  error: unknown;
  /** Its promises were already rejected (its own sync or an earlier one failed). */
  rejected: boolean;
}

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_GROUP_BYTES = 8 * 1024 * 1024;
const DEFAULT_PREALLOCATE_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_SYNCS_IN_FLIGHT = 2;
/**
 * Bucket bounds of the sync-latency histogram, ms. On this kind of disk a quiet fdatasync takes 0.1-1 ms; the upper
 * buckets separate the stalls (another writer's flush ahead in the queue) that decide an acknowledgement's p99.
 */
export const SYNC_BOUNDS_MS: readonly number[] = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500];
/** Reused source of zeros for preallocation. */
const ZEROS = Buffer.alloc(1024 * 1024);

/**
 * Per-shard append-only durable log with group commit.
 *
 * Invariants (the reason this class exists):
 *  1. append() resolves only after the record's bytes were written AND fdatasync'ed (fsync: true). Records are
 *     acknowledged in append order: group k+1 is acknowledged only after group k was.
 *  2. Writes are serial (one writev per group, appends arriving meanwhile form the next group); up to
 *     `maxSyncsInFlight` groups may be syncing at once. A group is acknowledged when its own fdatasync succeeded and
 *     every earlier group was acknowledged: a later sync is never taken as proof for an earlier group, because
 *     after a writeback error the kernel reports the error to one fdatasync caller only.
 *  3. `#activeBytes` is the durable (acknowledged) end of the active segment; `#writeEnd` the end of what was
 *     written. After a failed group (`#tailDirty`) every later group in flight is rejected too, and once nothing is
 *     syncing the bytes past the durable end are truncated away (and the truncation synced) before anything else is
 *     written or the segment is sealed, so acknowledged records are never followed by junk inside a sealed segment.
 *  4. Sealed segments are immutable and fully durable. A new segment's directory entry is fsynced before any record
 *     goes into it.
 *  5. Only the tail of the last segment can be torn by a crash; open() cuts it back to the last valid record.
 *  6. Only the active segment carries preallocated zeros past its durable end; a segment is trimmed to its exact
 *     end (durably) before it is sealed, so sealed segments end on a record boundary.
 */
export class IngestLog {
  readonly dir: string;
  readonly recovery: RecoveryReport;

  readonly #io: LogIo;
  readonly #fsync: boolean;
  readonly #segmentBytes: number;
  readonly #maxGroupBytes: number;
  readonly #preallocateBytes: number;
  readonly #maxSyncsInFlight: number;
  readonly #warn: (message: string) => void;

  #sealed: Segment[];
  #activeSeq: number;
  #activeFile: SegmentFile;
  #activeBytes: number;
  /** End of the bytes written to the active segment (acknowledged or still syncing). */
  #writeEnd: number;
  /** Size of the active segment file: bytes up to here are allocated (zeros past #activeBytes). */
  #allocatedBytes: number;
  #tailDirty = false;
  /** A rotation was decided but failed: nothing more may go into the old segment (it could be left sealed on crash). */
  #mustRotate = false;

  #queue: Pending[] = [];
  /** Groups written and not yet settled, in log order. */
  #written: Written[] = [];
  /** Counts failed groups; a write that saw it change while in progress is rejected too (invariant 3). */
  #failures = 0;
  /** The error of the last failed group, given to the groups rejected because of it. */
  #lastError: unknown = null;
  /** Wakes the drain loop waiting for an append or a sync to settle. */
  #wake: (() => void) | null = null;
  #drain: Promise<void> | null = null;
  #closing: Promise<void> | null = null;
  #releaseChain: Promise<void> = Promise.resolve();

  #appends = 0;
  #syncMs = 0;
  #syncMaxMs = 0;
  readonly #syncCounts: number[] = new Array<number>(SYNC_BOUNDS_MS.length + 1).fill(0);
  #groups = 0;
  #failedAppends = 0;

  private constructor(
    init: {
      dir: string;
      io: LogIo;
      fsync: boolean;
      segmentBytes: number;
      maxGroupBytes: number;
      preallocateBytes: number;
      maxSyncsInFlight: number;
      warn: (message: string) => void;
      sealed: Segment[];
      activeSeq: number;
      activeFile: SegmentFile;
      activeBytes: number;
      recovery: RecoveryReport;
    },
  ) {
    this.dir = init.dir;
    this.#io = init.io;
    this.#fsync = init.fsync;
    this.#segmentBytes = init.segmentBytes;
    this.#maxGroupBytes = init.maxGroupBytes;
    this.#preallocateBytes = init.preallocateBytes;
    this.#maxSyncsInFlight = init.maxSyncsInFlight;
    this.#warn = init.warn;
    this.#sealed = init.sealed;
    this.#activeSeq = init.activeSeq;
    this.#activeFile = init.activeFile;
    this.#activeBytes = init.activeBytes;
    this.#writeEnd = init.activeBytes;
    this.#allocatedBytes = init.activeBytes;
    this.recovery = init.recovery;
  }

  /**
   * Opens (or creates) the log in `opts.dir`. Scans the last segment and truncates a torn/corrupt tail, reporting the
   * dropped byte count through `warn` and `recovery`. Earlier segments are only stat'ed here; replay verifies them.
   */
  static async open(opts: IngestLogOptions): Promise<IngestLog> {
    const dir = resolve(opts.dir);
    const io = opts.io ?? nodeIo;
    const fsync = opts.fsync ?? true;
    const segmentBytes = opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    const maxGroupBytes = opts.maxGroupBytes ?? DEFAULT_MAX_GROUP_BYTES;
    const preallocateBytes = opts.preallocateBytes ?? DEFAULT_PREALLOCATE_BYTES;
    const maxSyncsInFlight = opts.maxSyncsInFlight ?? DEFAULT_MAX_SYNCS_IN_FLIGHT;
    const warn = opts.warn ?? ((m: string) => console.warn(m));
    if (!(segmentBytes > 0) || !(maxGroupBytes > 0)) throw new RangeError('ingest log: sizes must be positive');
    if (!(maxSyncsInFlight >= 1)) throw new RangeError('ingest log: maxSyncsInFlight must be at least 1');

    await ensureDir(dir, io, fsync);
    const seqs = await listSegments(dir);

    if (seqs.length === 0) {
      const file = await io.open(segmentPath(dir, 1), 'create');
      if (fsync) await io.syncDir(dir);
      return new IngestLog({
        dir, io, fsync, segmentBytes, maxGroupBytes, preallocateBytes, maxSyncsInFlight, warn,
        sealed: [], activeSeq: 1, activeFile: file, activeBytes: 0,
        recovery: { segment: 1, truncatedBytes: 0, reason: null },
      });
    }

    const sealed: Segment[] = [];
    for (const seq of seqs.slice(0, -1)) sealed.push({ seq, bytes: (await stat(segmentPath(dir, seq))).size });

    const lastSeq = seqs[seqs.length - 1]!;
    const lastPath = segmentPath(dir, lastSeq);
    const file = await io.open(lastPath, 'existing');
    let recovery: RecoveryReport;
    let validEnd: number;
    try {
      const size = await file.size();
      const scan = await findValidEnd(file, size);
      validEnd = scan.validEnd;
      recovery = { segment: lastSeq, truncatedBytes: size - validEnd, reason: scan.reason };
      if (validEnd < size) {
        // Unacknowledged leftovers of a write interrupted by a crash (or a damaged last record), or preallocated
        // zeros. Cut them so new records follow the last valid one directly; sync the cut so it cannot reappear
        // after power loss. Only a tail that is not all zeros is news worth a warning.
        if (!(await isZeroFilled(file, validEnd, size))) {
          warn(
            `[ingest-log] ${lastPath}: dropped ${size - validEnd} bytes of torn/corrupt tail at offset ${validEnd} ` +
              `(${scan.reason ?? 'unknown'})`,
          );
        } else {
          recovery = { segment: lastSeq, truncatedBytes: size - validEnd, reason: 'zero-filled tail (preallocated)' };
        }
        await file.truncate(validEnd);
        if (fsync) await file.datasync();
      }
    } catch (err) {
      await file.close().catch(() => undefined);
      throw err;
    }

    return new IngestLog({
      dir, io, fsync, segmentBytes, maxGroupBytes, preallocateBytes, maxSyncsInFlight, warn,
      sealed, activeSeq: lastSeq, activeFile: file, activeBytes: validEnd,
      recovery,
    });
  }

  /**
   * Appends one record. Resolves with the position just after it once it is durable; rejects with the file-system
   * error (ENOSPC, EIO, ...) if its group could not be written or synced. A rejected record was rolled back and will
   * not be acknowledged later, although after a crash it may still reappear in replay (src/README.md, "Ingestion and durability").
   * The payload is copied synchronously, so the caller may reuse its buffer immediately.
   */
  append(payload: Uint8Array): Promise<LogPosition> {
    if (this.#closing) return Promise.reject(new IngestLogClosedError());
    let frame: Buffer;
    try {
      frame = encodeFrame(payload);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<LogPosition>((resolve, reject) => {
      this.#queue.push({ frame, resolve, reject });
      if (this.#drain === null) this.#drain = this.#runDrain();
      else this.#wakeDrain();
    });
  }

  /** Position after the last durable record. */
  get endPosition(): LogPosition {
    return { segment: this.#activeSeq, offset: this.#activeBytes };
  }

  stats(): IngestLogStats {
    let bytes = this.#activeBytes;
    for (const s of this.#sealed) bytes += s.bytes;
    return {
      segments: this.#sealed.length + 1,
      bytes,
      appends: this.#appends,
      // Every completed sync is counted in exactly one latency bucket.
      syncs: this.#syncCounts.reduce((a, b) => a + b, 0),
      syncMs: Math.round(this.#syncMs),
      syncMaxMs: Math.round(this.#syncMaxMs * 10) / 10,
      syncLatency: { boundsMs: SYNC_BOUNDS_MS, counts: [...this.#syncCounts] },
      groups: this.#groups,
      failedAppends: this.#failedAppends,
    };
  }

  /**
   * Async iterator over the durable records strictly after `from` (null: from the oldest live segment), in log order.
   *
   * Reads a snapshot: the segments and the durable end that exist when iteration starts; records appended during
   * replay are not included. `from` must be a position this log produced (append result, replay `end`, endPosition).
   * Throws IngestLogCorruptError on a bad record (open() already repaired the only place a crash can tear).
   * Do not call releaseUpTo() on the segments being replayed.
   */
  async *replay(from: LogPosition | null): AsyncGenerator<ReplayedRecord, void, undefined> {
    const segments: Segment[] = [...this.#sealed, { seq: this.#activeSeq, bytes: this.#activeBytes }];
    for (const seg of segments) {
      if (from !== null && seg.seq < from.segment) continue;
      const start = from !== null && seg.seq === from.segment ? from.offset : 0;
      if (start >= seg.bytes) continue;
      const path = segmentPath(this.dir, seg.seq);
      let file;
      try {
        file = await this.#io.open(path, 'read');
      } catch (err) {
        // Released while the replay was on an earlier segment (a long re-send to a replacement thread, while
        // owners apply): every record in it was applied by all its owners, so there is nothing left to replay.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !this.#sealed.some((s) => s.seq === seg.seq) && seg.seq !== this.#activeSeq) continue;
        throw err;
      }
      try {
        for await (const rec of scanSegment(file, start, seg.bytes)) {
          if (!rec.ok) throw new IngestLogCorruptError(path, rec.offset, rec.reason);
          yield { payload: rec.payload, end: { segment: seg.seq, offset: rec.end } };
        }
      } finally {
        await file.close();
      }
    }
  }

  /**
   * Deletes sealed segments whose end is at or before `upTo` (the apply loop's durable checkpoint). The active segment
   * is never deleted, so sequence numbers keep growing and old checkpoints stay comparable. Calls are serialised.
   */
  releaseUpTo(upTo: LogPosition): Promise<void> {
    const run = this.#releaseChain.then(() => this.#release(upTo));
    this.#releaseChain = run.catch(() => undefined);
    return run;
  }

  /** Stops accepting appends, waits until every queued append is settled, closes the active segment. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      while (this.#drain !== null) await this.#drain;
      await this.#releaseChain;
      await this.#activeFile.close();
    })();
    return this.#closing;
  }

  async #release(upTo: LogPosition): Promise<void> {
    let removed = 0;
    try {
      while (this.#sealed.length > 0) {
        const seg = this.#sealed[0]!;
        if (comparePositions({ segment: seg.seq, offset: seg.bytes }, upTo) > 0) break;
        try {
          await unlink(segmentPath(this.dir, seg.seq));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
        this.#sealed.shift();
        removed++;
      }
    } finally {
      // Not needed for correctness (a resurrected old segment is only replayed again, and events are idempotent by
      // uuid), but it makes the freed space real after a power loss.
      if (removed > 0 && this.#fsync) await this.#io.syncDir(this.dir);
    }
  }

  async #runDrain(): Promise<void> {
    // Yield once so that every append() issued in the same synchronous burst joins the first group.
    await null;
    try {
      for (;;) {
        if (this.#queue.length > 0 && this.#written.length < this.#maxSyncsInFlight && !this.#mustWaitForSyncs()) {
          await this.#writeNextGroup();
          continue;
        }
        if (this.#queue.length === 0 && this.#written.length === 0) break;
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    } finally {
      // Reset in the same microtask as the empty check: an append() after this point starts a new drain.
      this.#drain = null;
    }
  }

  #wakeDrain(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** Rotation and tail repair need the active segment quiet: every written group settled. */
  #mustWaitForSyncs(): boolean {
    if (this.#written.length === 0) return false;
    return this.#tailDirty || this.#rotationDue();
  }

  #rotationDue(): boolean {
    return this.#mustRotate || (this.#writeEnd > 0 && this.#writeEnd + this.#queue[0]!.frame.length > this.#segmentBytes);
  }

  /** Takes the next group off the queue, writes it and starts its sync. Never throws. */
  async #writeNextGroup(): Promise<void> {
    const rotate = this.#rotationDue();
    const group = this.#takeGroup(rotate ? 0 : this.#writeEnd);
    const failuresBefore = this.#failures;
    let written: Written;
    try {
      if (this.#tailDirty) await this.#repairTail();
      if (rotate) await this.#rotate();

      const start = this.#writeEnd;
      let groupBytes = 0;
      for (const p of group) groupBytes += p.frame.length;
      if (this.#preallocateBytes > 0 && start + groupBytes > this.#allocatedBytes) await this.#preallocate(start + groupBytes);
      // From the first write on, bytes past the durable end may be on disk; if this group fails they must be cut.
      this.#writeEnd = start + groupBytes;
      await writeFully(this.#activeFile, group.map((p) => p.frame), start);
      written = { group, seq: this.#activeSeq, start, end: start + groupBytes, state: 'syncing', error: null, rejected: false };
    } catch (err) {
      this.#tailDirty = true;
      this.#failures++;
      this.#lastError = err;
      this.#failedAppends += group.length;
      for (const p of group) p.reject(err);
      return;
    }
    if (this.#failures !== failuresBefore) {
      // An earlier group failed while this one was being written: it lies past bytes that will be cut.
      this.#failedAppends += group.length;
      for (const p of group) p.reject(this.#lastError);
      return;
    }
    this.#written.push(written);
    if (!this.#fsync) {
      written.state = 'synced';
      this.#settle();
      return;
    }
    const syncStart = performance.now();
    this.#activeFile.datasync().then(
      () => {
        const took = performance.now() - syncStart;
        this.#syncMs += took;
        if (took > this.#syncMaxMs) this.#syncMaxMs = took;
        this.#syncCounts[syncBucket(took)]!++;
        written.state = 'synced';
        this.#settle();
      },
      (err: unknown) => {
        written.state = 'failed';
        written.error = err;
        this.#settle();
      },
    );
  }

  /** Acknowledges (or rejects) settled groups from the head of the log, in order; wakes the drain loop. */
  #settle(): void {
    while (this.#written.length > 0 && this.#written[0]!.state !== 'syncing') {
      const head = this.#written.shift()!;
      if (head.rejected) continue;
      if (head.state === 'failed') {
        // This group and every later one (written after its bytes) are rejected; the tail is cut once all settled.
        this.#tailDirty = true;
        this.#failures++;
        this.#lastError = head.error;
        for (const w of [head, ...this.#written]) {
          if (w.rejected) continue;
          w.rejected = true;
          this.#failedAppends += w.group.length;
          for (const p of w.group) p.reject(head.error);
        }
        continue;
      }
      this.#activeBytes = head.end;
      this.#groups++;
      this.#appends += head.group.length;
      let offset = head.start;
      for (const p of head.group) {
        offset += p.frame.length;
        p.resolve({ segment: head.seq, offset });
      }
    }
    this.#wakeDrain();
  }

  /** Bounded by maxGroupBytes and by the room left in the segment; always takes at least one record. */
  #takeGroup(segmentUsed: number): Pending[] {
    let bytes = 0;
    let n = 0;
    while (n < this.#queue.length) {
      const len = this.#queue[n]!.frame.length;
      if (n > 0 && (bytes + len > this.#maxGroupBytes || segmentUsed + bytes + len > this.#segmentBytes)) break;
      bytes += len;
      n++;
    }
    return this.#queue.splice(0, n);
  }

  /** Cuts whatever a failed group left past the durable end, durably, before anything else touches the segment. */
  async #repairTail(): Promise<void> {
    await this.#activeFile.truncate(this.#activeBytes);
    if (this.#fsync) await this.#activeFile.datasync();
    this.#allocatedBytes = this.#activeBytes;
    this.#writeEnd = this.#activeBytes;
    this.#tailDirty = false;
  }

  /**
   * Zero-fills the active segment up to at least `needed`, a preallocation chunk at a time (never past the
   * segment size unless a single record is larger). The next group's datasync makes it durable with its data.
   */
  async #preallocate(needed: number): Promise<void> {
    const target = Math.max(needed, Math.min(this.#segmentBytes, this.#allocatedBytes + this.#preallocateBytes));
    let at = this.#allocatedBytes;
    while (at < target) {
      const n = Math.min(ZEROS.length, target - at);
      at += await this.#activeFile.writev([ZEROS.subarray(0, n)], at);
    }
    this.#allocatedBytes = at;
  }

  /**
   * Seals the active segment (already fully durable, see invariant 3) and starts the next one. The directory is fsynced
   * before the first record goes in, otherwise a power loss could drop the file together with its acknowledged data.
   * On failure the old segment stays active but closed to writes (#mustRotate): if we crashed now, the possibly created
   * empty file would be the last segment, and only the last segment's tail is repaired on open. A retry reuses the same
   * sequence number ('create' truncates the leftover).
   */
  async #rotate(): Promise<void> {
    this.#mustRotate = true;
    if (this.#allocatedBytes > this.#activeBytes) {
      // Invariant 6: a sealed segment ends exactly at its last record.
      await this.#activeFile.truncate(this.#activeBytes);
      if (this.#fsync) await this.#activeFile.datasync();
      this.#allocatedBytes = this.#activeBytes;
    }
    const seq = this.#activeSeq + 1;
    const file = await this.#io.open(segmentPath(this.dir, seq), 'create');
    try {
      if (this.#fsync) await this.#io.syncDir(this.dir);
    } catch (err) {
      await file.close().catch(() => undefined);
      throw err;
    }
    const old = this.#activeFile;
    this.#sealed.push({ seq: this.#activeSeq, bytes: this.#activeBytes });
    this.#activeSeq = seq;
    this.#activeFile = file;
    this.#activeBytes = 0;
    this.#writeEnd = 0;
    this.#allocatedBytes = 0;
    this.#mustRotate = false;
    await old.close().catch((err: unknown) => this.#warn(`[ingest-log] closing sealed segment ${seq - 1}: ${String(err)}`));
  }
}

/** The histogram bucket of a sync that took `ms` (see SYNC_BOUNDS_MS). */
export function syncBucket(ms: number): number {
  let i = 0;
  while (i < SYNC_BOUNDS_MS.length && ms > SYNC_BOUNDS_MS[i]!) i++;
  return i;
}

/** True when every byte of [from, to) is zero (a preallocated tail rather than a torn write). */
async function isZeroFilled(file: SegmentFile, from: number, to: number): Promise<boolean> {
  const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, Math.max(1, to - from)));
  for (let at = from; at < to; ) {
    const n = await file.read(buf, 0, Math.min(buf.length, to - at), at);
    if (n === 0) return false;
    for (let i = 0; i < n; i++) if (buf[i] !== 0) return false;
    at += n;
  }
  return true;
}
