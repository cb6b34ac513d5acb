/**
 * The events of one shard, as column blocks per project, in the shard's events environment (design.md §4). This
 * is where events are stored: the events API, `GET /events/:id/` and every analysis read these blocks
 * (src/stores/events/event-store.ts adds the uuid index and the day counters beside them).
 *
 * Tables:
 *   - `scan_meta` [project, seq] -> {n, minTs, maxTs, cols: {name: kind}}: the sealed blocks, so a date range is
 *     pruned without reading any column;
 *   - `scan_columns` [project, seq, column name] -> bytes: one value per column of a sealed block, so a query
 *     copies out only the columns it reads (src/stores/scan/column-block.ts);
 *   - `scan_open` [project, seq] -> packed block: the open block, one record per apply chunk. The open block
 *     itself lives in memory (src/stores/scan/block-builder.ts); these records make it durable (they are written
 *     in the apply chunk's transaction) and rebuild it at start-up.
 * When an open block reaches SEAL_EVENTS it is sealed: its columns, its `order` column (the rows in timestamp and
 * uuid order, for the events API: src/stores/scan/row-order.ts) and its meta are written and its open records
 * deleted, in the apply chunk's transaction. A sealed block is never modified, only replaced as a whole (deleting
 * a person's events rewrites the blocks that hold them), which is what makes the per-thread column cache safe.
 *
 * Data directories of layout version 1 kept every event twice, as a row per event and in blocks without the uuid
 * column; they are converted at start-up (`rebuild` from the rows, src/worker/ingest/shard.ts).
 */
import type { Env, Table } from '../lmdb-env.js';
import { openTable, transact } from '../lmdb-env.js';
import { BlockBuilder, COL, type ScanEvent } from './block-builder.js';
import { decodeDict, decodeF64, decodeU32, encodeColumn, packBlock, PackedBlock, type BlockView, type ColumnData, type ColumnKind, type DictColumn } from './column-block.js';
import { ColumnCache } from './column-cache.js';
import { rowOrder } from './row-order.js';
import { withOverflow } from './overflow.js';

/**
 * Version 2: blocks hold every field of an event (uuid and person uuid columns added) and are its only copy.
 * Version 1 layouts are rebuilt from the per-event rows they were derived from.
 */
export const SCAN_LAYOUT_VERSION = 2;
const LAYOUT_KEY = 'scan_layout';

/**
 * Events per sealed block. Larger blocks mean fewer per-block costs in every query (a few LMDB reads and
 * dictionary decodes each); smaller ones a shorter pause of the apply loop while one is sealed.
 */
export const SEAL_EVENTS = 32_768;
/** Keys one transaction of a layout rebuild removes (each may dirty a page; see write-lane.ts). */
const REMOVALS_PER_TXN = 4096;

interface BlockMeta {
  n: number;
  minTs: number;
  maxTs: number;
  cols: Record<string, ColumnKind>;
  /** Bytes of its columns. */
  bytes?: number;
}

type MetaKey = [number, number];
type ColumnKey = [number, number, string];

/**
 * Told of every event about to leave the layout (deletions and retention), before its block is rewritten or dropped:
 * `rows` marks them, null meaning every row of the block.
 */
export type RemovalListener = (team: number, block: BlockView, rows: Uint8Array | null) => void;

export class ScanStore {
  private readonly meta: Table<BlockMeta, MetaKey>;
  private readonly columns: Table<Buffer, ColumnKey>;
  private readonly openRecords: Table<Buffer, MetaKey>;
  private readonly open = new Map<number, BlockBuilder>();
  private nextSeq = 1;

  constructor(
    private readonly env: Env,
    private readonly state: Table<unknown, string>,
    private readonly cache: ColumnCache,
    /** Distinguishes this shard's blocks in the thread's column cache. */
    private readonly shard: number,
    private readonly removing: RemovalListener = () => {},
  ) {
    this.meta = env.openDB<BlockMeta, MetaKey>('scan_meta', { encoder: { useRecords: false } } as object);
    this.columns = env.openDB<Buffer, ColumnKey>('scan_columns', { encoding: 'binary' } as object);
    this.openRecords = env.openDB<Buffer, MetaKey>('scan_open', { encoding: 'binary' } as object);
    this.loadOpenBlocks();
  }

  /** The stored layout's version: 0 for none (a new environment, or one written before the layout existed). */
  get version(): number {
    const layout = this.state.get(LAYOUT_KEY) as { version?: number } | undefined;
    return layout?.version ?? 0;
  }

  /** Records the layout as current (a new environment, once it is open). Only inside a write transaction. */
  markCurrent(): void {
    this.state.put(LAYOUT_KEY, { version: SCAN_LAYOUT_VERSION });
  }

  /**
   * Adds a chunk's events of one project. Only inside the apply chunk's write transaction; if that transaction
   * fails, call `reloadOpen` (the open block in memory would hold events that were not stored).
   */
  append(team: number, events: readonly ScanEvent[]): void {
    if (events.length === 0) return;
    let builder = this.open.get(team);
    if (!builder) this.open.set(team, (builder = new BlockBuilder(1024)));
    const from = builder.size;
    for (const e of events) builder.add(e);
    if (builder.size >= SEAL_EVENTS) {
      this.seal(team, builder);
      this.open.delete(team);
      return;
    }
    const { minTs, maxTs, columns } = builder.columns(from, builder.size);
    this.openRecords.put([team, this.nextSeq++], packBlock(builder.size - from, minTs, maxTs, columns));
  }

  /**
   * Seals every project's open block now, whatever its size, so that every event stored so far is in a sealed
   * block (the ClickHouse backfill's starting point). Only inside a write transaction.
   */
  sealOpenBlocks(): void {
    for (const [team, builder] of this.open) {
      if (builder.size > 0) this.seal(team, builder);
      this.open.delete(team);
    }
  }

  /** Every sealed block, as [project, seq], in key order. */
  sealedBlockKeys(): [number, number][] {
    return Array.from(this.meta.getKeys() as Iterable<MetaKey>, (key) => [key[0], key[1]]);
  }

  /** A sealed block, or null if it no longer exists (dropped by retention or rewritten by a deletion). */
  sealedBlock(team: number, seq: number): BlockView | null {
    const meta = this.meta.get([team, seq]) as BlockMeta | undefined;
    return meta ? new StoredBlock(this, seq, team, meta) : null;
  }

  /** Drops the open blocks in memory and reads them back from their durable records (after a failed write). */
  reloadOpen(): void {
    this.open.clear();
    this.loadOpenBlocks();
  }

  /** The blocks of a project that may hold events in [fromTs, toTs] (inclusive), the open block last. */
  blocks(team: number, fromTs = -Infinity, toTs = Infinity): BlockView[] {
    const out: BlockView[] = [];
    for (const { key, value } of this.meta.getRange({ start: [team, 0], end: [team + 1, 0] } as never) as Iterable<{ key: MetaKey; value: BlockMeta }>) {
      if (value.maxTs < fromTs || value.minTs > toTs) continue;
      out.push(new StoredBlock(this, key[1], team, value));
    }
    const open = this.open.get(team);
    if (open && open.size > 0) {
      const view = open.snapshot();
      if (!(view.maxTs < fromTs || view.minTs > toTs)) out.push(view);
    }
    return out;
  }

  /** Size of the layout of every project: sealed blocks (events, bytes of their columns) and open events. */
  stats(): { sealedBlocks: number; sealedEvents: number; sealedBytes: number; openEvents: number; openBytes: number } {
    let sealedBlocks = 0;
    let sealedEvents = 0;
    let sealedBytes = 0;
    for (const { value } of this.meta.getRange({} as never) as Iterable<{ value: BlockMeta }>) {
      sealedBlocks++;
      sealedEvents += value.n;
      sealedBytes += value.bytes ?? 0;
    }
    let openEvents = 0;
    let openBytes = 0;
    for (const b of this.open.values()) {
      openEvents += b.size;
      openBytes += b.approxBytes();
    }
    return { sealedBlocks, sealedEvents, sealedBytes, openEvents, openBytes };
  }

  /** Events in the layout for a project (sealed and open), for tests and stats. */
  count(team: number): number {
    let n = this.open.get(team)?.size ?? 0;
    for (const { value } of this.meta.getRange({ start: [team, 0], end: [team + 1, 0] } as never) as Iterable<{ value: BlockMeta }>) n += value.n;
    return n;
  }

  /** A column of a sealed block, through the thread's column cache. */
  readColumn(team: number, seq: number, name: string, kind: ColumnKind, n: number): Float64Array | Uint32Array | DictColumn | null {
    const cacheKey = `${this.shard}:${team}:${seq}:${name}`;
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) return hit;
    const bytes = this.columns.getBinary([team, seq, name]);
    if (!bytes) return null;
    const col = kind === 'f64' ? decodeF64(bytes) : kind === 'u32' ? decodeU32(bytes) : decodeDict(bytes, n);
    this.cache.set(cacheKey, col, bytes.byteLength);
    return col;
  }

  /**
   * One step of removing the events `drop` selects from a project's blocks (deleting a person's events): rewrites
   * up to `maxRewrites` blocks that hold such events, so that each step is a bounded write transaction. Only inside
   * a write transaction of the environment. `more` is true when it stopped with blocks left to look at; a block
   * already rewritten holds none of the events, so the next step passes it by.
   */
  removeEventsStep(team: number, drop: (block: BlockView) => Uint8Array | null, maxRewrites: number): { removed: number; more: boolean } {
    let removed = 0;
    let rewritten = 0;
    for (const view of this.blocks(team)) {
      const doomed = drop(view);
      if (!doomed) continue;
      if (rewritten === maxRewrites) return { removed, more: true };
      removed += this.rewrite(team, view, doomed);
      rewritten++;
    }
    return { removed, more: false };
  }

  /**
   * One step of data retention: removes a project's events older than `cutoff` from the layout, a little at a
   * time so that each step is a short write transaction. A step drops up to `wholeBlocks` sealed blocks whose
   * events are all older (a few deletes each, their columns never read), or else rewrites one block that straddles
   * the cutoff (the oldest sealed one first, the open block last). Only inside a write transaction; `more` is
   * false once nothing older than `cutoff` is left.
   */
  expireStep(team: number, cutoff: number, wholeBlocks: number): { removed: number; more: boolean } {
    const sealed = this.blocks(team, -Infinity, cutoff - 1).filter((b): b is StoredBlock => b instanceof StoredBlock);
    let removed = 0;
    let dropped = 0;
    for (const block of sealed) {
      if (block.maxTs >= cutoff) continue;
      if (dropped === wholeBlocks) return { removed, more: true };
      this.removing(team, block, null);
      this.deleteSealed(team, block.seq, block.meta);
      removed += block.n;
      dropped++;
    }
    if (dropped > 0) return { removed, more: true };
    const straddling = sealed[0] ?? this.openBlockBefore(team, cutoff);
    if (!straddling) return { removed: 0, more: false };
    const ts = straddling.f64(COL.ts);
    const doomed = new Uint8Array(straddling.n);
    if (ts) for (let i = 0; i < straddling.n; i++) if (ts[i]! < cutoff) doomed[i] = 1;
    removed = this.rewrite(team, straddling, doomed);
    return { removed, more: straddling instanceof StoredBlock };
  }

  /** The open block of a project if it holds an event older than `cutoff`. */
  private openBlockBefore(team: number, cutoff: number): BlockView | null {
    const open = this.open.get(team);
    if (!open || open.size === 0) return null;
    const view = open.snapshot();
    return view.minTs < cutoff ? view : null;
  }

  /** Replaces a block by one without the rows `doomed` marks; returns how many it dropped. */
  private rewrite(team: number, view: BlockView, doomed: Uint8Array): number {
    let dropped = 0;
    for (let i = 0; i < view.n; i++) if (doomed[i]) dropped++;
    if (dropped === 0) return 0;
    this.removing(team, view, doomed);
    const kept = new BlockBuilder(view.n);
    appendRows(kept, view, doomed);
    if (view instanceof StoredBlock) {
      this.deleteSealed(team, view.seq, view.meta);
      if (kept.size > 0) this.writeSealed(team, kept);
    } else {
      this.clearOpenRecords(team);
      this.open.set(team, kept);
      if (kept.size > 0) {
        const { minTs, maxTs, columns } = kept.columns();
        this.openRecords.put([team, this.nextSeq++], packBlock(kept.size, minTs, maxTs, columns));
      }
    }
    return dropped;
  }

  /**
   * Builds the layout from events (oldest first), replacing whatever layout was there: converting a version 1
   * environment from its rows. Runs at start-up before the shard applies or answers anything; resolves once written.
   */
  async rebuild(eventsOf: (emit: (team: number, e: ScanEvent) => void) => void): Promise<number> {
    // What was there goes in bounded transactions (REMOVALS_PER_TXN keys each), like every write (write-lane.ts).
    for (const table of [this.meta, this.columns, this.openRecords] as Table<unknown, ColumnKey | MetaKey>[]) {
      let removed: number;
      do {
        removed = await transact(this.env, () => {
          const keys = Array.from(table.getKeys({ limit: REMOVALS_PER_TXN } as never));
          for (const key of keys) table.remove(key);
          return keys.length;
        });
      } while (removed === REMOVALS_PER_TXN);
    }
    this.open.clear();
    let total = 0;
    let pending: Promise<unknown> = Promise.resolve();
    const builders = new Map<number, BlockBuilder>();
    eventsOf((team, e) => {
      let b = builders.get(team);
      if (!b) builders.set(team, (b = new BlockBuilder(SEAL_EVENTS)));
      b.add(e);
      total++;
      if (b.size >= SEAL_EVENTS) {
        const full = b;
        builders.delete(team);
        pending = transact(this.env, () => this.writeSealed(team, full));
      }
    });
    await pending;
    await transact(this.env, () => {
      for (const [team, b] of builders) {
        const { minTs, maxTs, columns } = b.columns();
        this.openRecords.put([team, this.nextSeq++], packBlock(b.size, minTs, maxTs, columns));
      }
      this.state.put(LAYOUT_KEY, { version: SCAN_LAYOUT_VERSION });
    });
    for (const [team, b] of builders) this.open.set(team, b);
    return total;
  }

  private seal(team: number, builder: BlockBuilder): void {
    this.writeSealed(team, builder);
    this.clearOpenRecords(team);
  }

  private writeSealed(team: number, builder: BlockBuilder): void {
    const seq = this.nextSeq++;
    const { minTs, maxTs, columns } = builder.columns();
    const ts = columns.get(COL.ts) as { data: Float64Array };
    const uuids = columns.get(COL.uuid);
    columns.set(COL.order, { kind: 'u32', data: rowOrder(ts.data, uuids?.kind === 'dict' ? uuids : null, builder.size) });
    const cols: Record<string, ColumnKind> = {};
    let bytes = 0;
    for (const [name, col] of columns) {
      cols[name] = col.kind;
      const encoded = encodeColumn(col);
      bytes += encoded.byteLength;
      this.columns.put([team, seq, name], encoded);
    }
    this.meta.put([team, seq], { n: builder.size, minTs, maxTs, cols, bytes });
  }

  private deleteSealed(team: number, seq: number, meta: BlockMeta): void {
    for (const name of Object.keys(meta.cols)) {
      this.columns.remove([team, seq, name]);
      this.cache.delete(`${this.shard}:${team}:${seq}:${name}`);
    }
    this.meta.remove([team, seq]);
  }

  private clearOpenRecords(team: number): void {
    for (const key of this.openRecords.getKeys({ start: [team, 0], end: [team + 1, 0] } as never) as Iterable<MetaKey>) this.openRecords.remove(key);
  }

  private loadOpenBlocks(): void {
    let maxSeq = 0;
    for (const key of this.meta.getKeys({} as never) as Iterable<MetaKey>) maxSeq = Math.max(maxSeq, key[1]);
    for (const { key, value } of this.openRecords.getRange({} as never) as Iterable<{ key: MetaKey; value: Buffer }>) {
      maxSeq = Math.max(maxSeq, key[1]);
      let b = this.open.get(key[0]);
      if (!b) this.open.set(key[0], (b = new BlockBuilder(1024)));
      b.addBlock(new PackedBlock(value));
    }
    this.nextSeq = Math.max(this.nextSeq, maxSeq + 1);
  }
}

/** Copies the rows of `view` that `skip` does not mark into `target`. */
function appendRows(target: BlockBuilder, view: BlockView, skip: Uint8Array): void {
  const columns = new Map<string, ColumnData>();
  const keep: number[] = [];
  for (let i = 0; i < view.n; i++) if (!skip[i]) keep.push(i);
  const pick = <A extends Float64Array | Uint32Array>(a: A | null, Ctor: { new (n: number): A }, missing: number): A => {
    const out = new Ctor(keep.length);
    keep.forEach((row, k) => (out[k] = a ? a[row]! : missing));
    return out;
  };
  let minTs = Infinity;
  let maxTs = -Infinity;
  const ts = pick(view.f64(COL.ts), Float64Array, 0);
  for (const t of ts) {
    if (t < minTs) minTs = t;
    if (t > maxTs) maxTs = t;
  }
  for (const name of view.names()) {
    // Own columns only: the overflow columns are among the names and are copied as they are.
    const d = view.ownDict(name);
    if (d) {
      const codes = new Uint32Array(keep.length);
      keep.forEach((row, k) => (codes[k] = d.codes[row]!));
      columns.set(name, { kind: 'dict', codes, values: d.values });
    }
  }
  columns.set(COL.ts, { kind: 'f64', data: ts });
  columns.set(COL.personId, { kind: 'u32', data: pick(view.u32(COL.personId), Uint32Array, 0) });
  columns.set(COL.personCreatedAt, { kind: 'f64', data: pick(view.f64(COL.personCreatedAt), Float64Array, NaN) });
  target.addBlock(new PackedBlock(packBlock(keep.length, minTs, maxTs, columns)));
}

/**
 * The sequence number of a sealed block of `blocks()`, null for the open block. A sealed block is never modified
 * (a deletion writes a new one under a new number), so within a run (shard, project, seq) names fixed content and
 * may key a cache, as the column cache does.
 */
export function sealedSeqOf(view: BlockView): number | null {
  return view instanceof StoredBlock ? view.seq : null;
}

/** A sealed block: columns read from LMDB on first use (through the column cache). */
class StoredBlock implements BlockView {
  constructor(
    private readonly store: ScanStore,
    readonly seq: number,
    private readonly team: number,
    readonly meta: BlockMeta,
  ) {}

  get n(): number {
    return this.meta.n;
  }
  get minTs(): number {
    return this.meta.minTs;
  }
  get maxTs(): number {
    return this.meta.maxTs;
  }

  has(name: string): boolean {
    return this.meta.cols[name] !== undefined;
  }

  names(prefix = ''): string[] {
    return Object.keys(this.meta.cols).filter((name) => name.startsWith(prefix));
  }

  private read(name: string, kind: ColumnKind) {
    if (this.meta.cols[name] !== kind) return null;
    return this.store.readColumn(this.team, this.seq, name, kind, this.meta.n);
  }

  f64(name: string): Float64Array | null {
    return this.read(name, 'f64') as Float64Array | null;
  }

  u32(name: string): Uint32Array | null {
    return this.read(name, 'u32') as Uint32Array | null;
  }

  dict(name: string): DictColumn | null {
    return withOverflow(this, name, this.ownDict(name));
  }

  ownDict(name: string): DictColumn | null {
    return this.read(name, 'dict') as DictColumn | null;
  }
}
