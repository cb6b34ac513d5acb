/**
 * The open block: a project's newest events in one shard, as columns in memory, growing as the apply loop adds
 * them, until it is full and sealed (src/stores/scan/scan-store.ts). Queries read it through a snapshot.
 *
 * Cost per event matters (the apply loop runs it for every event): one typed-array write per fixed column and one
 * Map lookup per property (src/stores/scan/dictionary.ts). A person's property map is usually the same object for
 * many events of a chunk (persons are copied on write), so its codes are computed once and copied.
 *
 * Rows are only ever appended (or cut back after a failed write, `truncate`), and arrays are replaced, never
 * resized in place, when they grow: a snapshot keeps seeing exactly the rows it was taken with.
 */
import { codeArrayFor, type BlockView, type ColumnData, type ColumnKind, type DictColumn } from './column-block.js';
import { Dictionary } from './dictionary.js';

/** One event as the scan layout keeps it. */
export interface ScanEvent {
  /** The event's uuid: what deduplication and `GET /events/:id/` know it by. */
  uuid: string;
  ts: number;
  event: string;
  distinctId: string;
  /** The person at ingestion (merges are resolved when reading); 0 for none. */
  personId: number;
  /** The person's uuid at ingestion, '' for none (what the events API shows when the person is gone). */
  personUuid: string;
  /** The person's created_at in ms, NaN for none. */
  personCreatedAt: number;
  properties: Readonly<Record<string, unknown>>;
  /** The person's properties as they were right after this event was applied (persons on events). */
  personProperties: Readonly<Record<string, unknown>>;
  elementsChain: string;
}

/** Column names: fixed fields, then `p:<key>` event properties and `pp:<key>` person properties. */
export const COL = {
  uuid: 'uuid',
  ts: 'ts',
  event: 'event',
  distinctId: 'distinct_id',
  personId: 'person_id',
  personUuid: 'person_uuid',
  personCreatedAt: 'person_created_at',
  elementsChain: 'elements_chain',
  /** Sealed blocks only: the rows in (timestamp, uuid) order (src/stores/scan/row-order.ts). */
  order: 'order',
} as const;
export const EVENT_PROP = 'p:';
export const PERSON_PROP = 'pp:';

class DictBuilder {
  readonly dictionary = new Dictionary();
  codes: Uint32Array;

  constructor(capacity: number) {
    this.codes = new Uint32Array(capacity);
  }

  grow(capacity: number): void {
    const next = new Uint32Array(capacity);
    next.set(this.codes);
    this.codes = next;
  }

  set(row: number, value: unknown): void {
    this.codes[row] = this.dictionary.codeOf(value);
  }
}

/** Scratch for re-numbering dictionary codes (reused: one per thread is enough, blocks are built one at a time). */
let remapScratch = new Uint32Array(1024);

export class BlockBuilder {
  private capacity: number;
  private n = 0;
  private ts: Float64Array;
  private personIds: Uint32Array;
  private personCreated: Float64Array;
  /** Fixed dictionary columns by name, property columns by key (no name concatenated per event). */
  private readonly dicts = new Map<string, DictBuilder>();
  private readonly eventProps = new Map<string, DictBuilder>();
  private readonly personProps = new Map<string, DictBuilder>();
  private lastPersonProps: object | null = null;
  private lastPersonRow = -1;

  constructor(expected = 256) {
    this.capacity = Math.max(16, expected);
    this.ts = new Float64Array(this.capacity);
    this.personIds = new Uint32Array(this.capacity);
    this.personCreated = new Float64Array(this.capacity);
  }

  get size(): number {
    return this.n;
  }

  /** About what this open block holds in memory: its fixed columns and every dictionary column (/metrics). */
  approxBytes(): number {
    let bytes = this.ts.byteLength + this.personIds.byteLength + this.personCreated.byteLength;
    for (const columns of [this.dicts, this.eventProps, this.personProps]) {
      for (const d of columns.values()) bytes += d.codes.byteLength + d.dictionary.approxBytes();
    }
    return bytes;
  }

  add(e: ScanEvent): void {
    if (this.n === this.capacity) this.grow();
    const row = this.n++;
    this.ts[row] = e.ts;
    this.personIds[row] = e.personId;
    this.personCreated[row] = e.personCreatedAt;
    this.column(this.dicts, COL.uuid).set(row, e.uuid);
    this.column(this.dicts, COL.event).set(row, e.event);
    this.column(this.dicts, COL.distinctId).set(row, e.distinctId);
    if (e.personUuid !== '') this.column(this.dicts, COL.personUuid).set(row, e.personUuid);
    if (e.elementsChain !== '') this.column(this.dicts, COL.elementsChain).set(row, e.elementsChain);
    const props = e.properties;
    for (const key in props) {
      const value = props[key];
      if (value !== undefined) this.column(this.eventProps, key).set(row, value);
    }
    this.addPersonProperties(row, e.personProperties);
  }

  private addPersonProperties(row: number, props: Readonly<Record<string, unknown>>): void {
    if (props === this.lastPersonProps) {
      const from = this.lastPersonRow;
      for (const key in props) {
        const col = this.personProps.get(key);
        if (col) col.codes[row] = col.codes[from]!;
      }
      return;
    }
    for (const key in props) {
      const value = props[key];
      if (value !== undefined) this.column(this.personProps, key).set(row, value);
    }
    this.lastPersonProps = props;
    this.lastPersonRow = row;
  }

  /** Appends every row of another block (start-up: the packed chunk records of the open block). */
  addBlock(view: BlockView): void {
    const from = this.n;
    const n = view.n;
    while (this.capacity < from + n) this.grow();
    this.ts.set(view.f64(COL.ts) ?? new Float64Array(n), from);
    this.personIds.set(view.u32(COL.personId) ?? new Uint32Array(n), from);
    this.personCreated.set(view.f64(COL.personCreatedAt) ?? new Float64Array(n).fill(NaN), from);
    for (const name of view.names()) {
      const source = view.dict(name);
      if (!source) continue;
      const target = name.startsWith(EVENT_PROP) ? this.column(this.eventProps, name.slice(EVENT_PROP.length))
        : name.startsWith(PERSON_PROP) ? this.column(this.personProps, name.slice(PERSON_PROP.length))
          : this.column(this.dicts, name);
      const remap = source.values.map((v) => target.dictionary.codeOf(v));
      for (let i = 0; i < n; i++) {
        const c = source.codes[i]!;
        target.codes[from + i] = c === 0 ? 0 : remap[c - 1]!;
      }
    }
    this.n = from + n;
    this.lastPersonProps = null;
  }

  /**
   * Forgets the rows from `n` on (their write failed). Dictionary entries they added stay, unused. The code arrays
   * are replaced, not cleared in place: a snapshot taken meanwhile may still be read.
   */
  truncate(n: number): void {
    if (n >= this.n) return;
    for (const columns of [this.dicts, this.eventProps, this.personProps]) {
      for (const col of columns.values()) {
        const codes = col.codes.slice();
        codes.fill(0, n);
        col.codes = codes;
      }
    }
    this.n = n;
    this.lastPersonProps = null;
  }

  /** The rows [from, to) as columns with their own compact dictionaries (unused entries left out). */
  columns(from = 0, to = this.n): { minTs: number; maxTs: number; columns: Map<string, ColumnData> } {
    const columns = new Map<string, ColumnData>();
    const ts = this.ts.slice(from, to);
    let minTs = Infinity;
    let maxTs = -Infinity;
    for (let i = 0; i < ts.length; i++) {
      const t = ts[i]!;
      if (t < minTs) minTs = t;
      if (t > maxTs) maxTs = t;
    }
    columns.set(COL.ts, { kind: 'f64', data: ts });
    columns.set(COL.personId, { kind: 'u32', data: this.personIds.slice(from, to) });
    columns.set(COL.personCreatedAt, { kind: 'f64', data: this.personCreated.slice(from, to) });
    const put = (name: string, col: DictBuilder) => {
      const compact = compactDict(col, from, to);
      if (compact) columns.set(name, compact);
    };
    for (const [name, col] of this.dicts) put(name, col);
    for (const [key, col] of this.eventProps) put(EVENT_PROP + key, col);
    for (const [key, col] of this.personProps) put(PERSON_PROP + key, col);
    return { minTs, maxTs, columns };
  }

  /** The rows added so far, as a block view that later additions do not change. */
  snapshot(): BlockView {
    const n = this.n;
    const fixed = new Map<string, Float64Array | Uint32Array>([
      [COL.ts, this.ts.subarray(0, n)],
      [COL.personId, this.personIds.subarray(0, n)],
      [COL.personCreatedAt, this.personCreated.subarray(0, n)],
    ]);
    const dicts = new Map<string, DictBuilder>();
    for (const [name, col] of this.dicts) dicts.set(name, col);
    for (const [key, col] of this.eventProps) dicts.set(EVENT_PROP + key, col);
    for (const [key, col] of this.personProps) dicts.set(PERSON_PROP + key, col);
    // Rows added later are written past `n` and values only ever appended, so views of the live arrays stay exact.
    const captured = new Map<string, DictColumn>();
    for (const [name, col] of dicts) captured.set(name, { codes: col.codes.subarray(0, n), values: col.dictionary.values });
    let minTs = Infinity;
    let maxTs = -Infinity;
    const ts = fixed.get(COL.ts) as Float64Array;
    for (let i = 0; i < n; i++) {
      const t = ts[i]!;
      if (t < minTs) minTs = t;
      if (t > maxTs) maxTs = t;
    }
    return new MemoryBlock(n, minTs, maxTs, fixed, captured);
  }

  private column(columns: Map<string, DictBuilder>, name: string): DictBuilder {
    let col = columns.get(name);
    if (!col) {
      col = new DictBuilder(this.capacity);
      columns.set(name, col);
    }
    return col;
  }

  private grow(): void {
    this.capacity *= 2;
    const grow64 = (a: Float64Array) => {
      const next = new Float64Array(this.capacity);
      next.set(a);
      return next;
    };
    this.ts = grow64(this.ts);
    this.personCreated = grow64(this.personCreated);
    const ids = new Uint32Array(this.capacity);
    ids.set(this.personIds);
    this.personIds = ids;
    for (const columns of [this.dicts, this.eventProps, this.personProps]) for (const col of columns.values()) col.grow(this.capacity);
  }
}

/** A dictionary column's rows [from, to), re-numbered densely in order of first use; null if no row has a value. */
function compactDict(col: DictBuilder, from: number, to: number): ColumnData | null {
  const size = col.dictionary.size;
  if (remapScratch.length <= size) remapScratch = new Uint32Array(Math.max(size + 1, remapScratch.length * 2));
  const remap = remapScratch;
  remap.fill(0, 0, size + 1);
  const all = col.dictionary.values;
  const values: unknown[] = [];
  const src = col.codes;
  for (let i = from; i < to; i++) {
    const c = src[i]!;
    if (c !== 0 && remap[c] === 0) remap[c] = values.push(all[c - 1]);
  }
  if (values.length === 0) return null;
  const codes = codeArrayFor(values.length, to - from);
  for (let i = from; i < to; i++) codes[i - from] = remap[src[i]!]!;
  return { kind: 'dict', codes, values };
}

/** A block view over arrays in memory (the open block's snapshot). */
class MemoryBlock implements BlockView {
  constructor(
    readonly n: number,
    readonly minTs: number,
    readonly maxTs: number,
    private readonly fixed: Map<string, Float64Array | Uint32Array>,
    private readonly dicts: Map<string, DictColumn>,
  ) {}

  has(name: string): boolean {
    return this.fixed.has(name) || this.dicts.has(name);
  }

  names(prefix = ''): string[] {
    return [...this.fixed.keys(), ...this.dicts.keys()].filter((name) => name.startsWith(prefix));
  }

  f64(name: string): Float64Array | null {
    const a = this.fixed.get(name);
    return a instanceof Float64Array ? a : null;
  }

  u32(name: string): Uint32Array | null {
    const a = this.fixed.get(name);
    return a instanceof Uint32Array ? a : null;
  }

  dict(name: string): DictColumn | null {
    return this.dicts.get(name) ?? null;
  }

  kinds(): [string, ColumnKind][] {
    return [...this.fixed].map(([name, a]) => [name, a instanceof Float64Array ? 'f64' : 'u32'] as [string, ColumnKind])
      .concat([...this.dicts.keys()].map((name) => [name, 'dict'] as [string, ColumnKind]));
  }
}
