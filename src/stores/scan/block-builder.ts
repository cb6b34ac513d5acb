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
import { DictBuilder } from './dict-builder.js';
import { EVENT_PROP, MAX_COLUMN_KEY, MAX_PROPERTY_COLUMNS, NEW_COLUMNS_PER_EVENT, OVERFLOW, overflowObject, PERSON_PROP, setOwn, withOverflow } from './overflow.js';

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
  /** A row's event properties that have no column of their own, as one object (src/stores/scan/overflow.ts). */
  propertiesOverflow: OVERFLOW.event,
  /** Likewise for the person properties. */
  personPropertiesOverflow: OVERFLOW.person,
} as const;
export { EVENT_PROP, PERSON_PROP } from './overflow.js';

/** Scratch for re-numbering dictionary codes (reused: one per thread is enough, blocks are built one at a time). */
let remapScratch = new Uint32Array(1024);

/** Which kind of property columns: the event's own (`p:`) or its person's (`pp:`). */
interface PropertyKind {
  columns: Map<string, DictBuilder>;
  prefix: string;
  overflow: string;
}

export class BlockBuilder {
  private capacity: number;
  private n = 0;
  private ts: Float64Array;
  private personIds: Uint32Array;
  private personCreated: Float64Array;
  /** Fixed dictionary columns by name (overflow columns among them), property columns by key. */
  private readonly dicts = new Map<string, DictBuilder>();
  private readonly eventProps: PropertyKind = { columns: new Map(), prefix: EVENT_PROP, overflow: COL.propertiesOverflow };
  private readonly personProps: PropertyKind = { columns: new Map(), prefix: PERSON_PROP, overflow: COL.personPropertiesOverflow };
  /**
   * The person properties of the last row and the codes they were given there: the next event of the same person
   * (the same object: persons are copied on write) copies the codes instead of looking every value up again.
   */
  private lastPersonProps: object | null = null;
  private lastPersonColumns: DictBuilder[] = [];
  private lastPersonCodes: number[] = [];

  constructor(expected = 256) {
    this.capacity = Math.max(16, expected);
    this.ts = new Float64Array(this.capacity);
    this.personIds = new Uint32Array(this.capacity);
    this.personCreated = new Float64Array(this.capacity);
  }

  get size(): number {
    return this.n;
  }

  /** Property columns of each kind, for tests and stats. */
  get propertyColumns(): { event: number; person: number } {
    return { event: this.eventProps.columns.size, person: this.personProps.columns.size };
  }

  /** About what this open block holds in memory: its fixed columns and every dictionary column (/metrics). */
  approxBytes(): number {
    let bytes = this.ts.byteLength + this.personIds.byteLength + this.personCreated.byteLength;
    for (const columns of [this.dicts, this.eventProps.columns, this.personProps.columns]) {
      for (const d of columns.values()) bytes += d.approxBytes();
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
    this.addProperties(this.eventProps, row, e.properties, null, null);
    this.addPersonProperties(row, e.personProperties);
  }

  /**
   * A row's properties of one kind: into their columns, opening a column for a key that has none while the block
   * and this event may (src/stores/scan/overflow.ts), the rest into the row's overflow object. `used`/`codes`, when
   * given, collect the columns written and their codes.
   */
  private addProperties(kind: PropertyKind, row: number, props: Readonly<Record<string, unknown>>, used: DictBuilder[] | null, codes: number[] | null): void {
    let overflow: Record<string, unknown> | null = null;
    let opening = NEW_COLUMNS_PER_EVENT;
    const columns = kind.columns;
    for (const key in props) {
      const value = props[key];
      if (value === undefined) continue;
      let col = columns.get(key);
      if (!col) {
        if (opening === 0 || key.length > MAX_COLUMN_KEY || columns.size >= MAX_PROPERTY_COLUMNS) {
          setOwn((overflow ??= {}), key, value);
          continue;
        }
        opening--;
        columns.set(key, (col = new DictBuilder(this.capacity)));
      }
      const code = col.set(row, value);
      used?.push(col);
      codes?.push(code);
    }
    if (overflow) {
      const col = this.column(this.dicts, kind.overflow);
      const code = col.set(row, JSON.stringify(overflow));
      used?.push(col);
      codes?.push(code);
    }
  }

  private addPersonProperties(row: number, props: Readonly<Record<string, unknown>>): void {
    if (props === this.lastPersonProps) {
      const columns = this.lastPersonColumns;
      const codes = this.lastPersonCodes;
      for (let i = 0; i < columns.length; i++) columns[i]!.setCode(row, codes[i]!);
      return;
    }
    const columns: DictBuilder[] = [];
    const codes: number[] = [];
    this.addProperties(this.personProps, row, props, columns, codes);
    this.lastPersonProps = props;
    this.lastPersonColumns = columns;
    this.lastPersonCodes = codes;
  }

  /**
   * Appends every row of another block (start-up: the packed chunk records of the open block; a block rewritten
   * without some rows). Property columns past this block's bounds (a block written before the bounds, or merged
   * with other columns) are moved into the rows' overflow objects, so what a block holds stays bounded.
   */
  addBlock(view: BlockView): void {
    const from = this.n;
    const n = view.n;
    while (this.capacity < from + n) this.grow();
    this.ts.set(view.f64(COL.ts) ?? new Float64Array(n), from);
    this.personIds.set(view.u32(COL.personId) ?? new Uint32Array(n), from);
    this.personCreated.set(view.f64(COL.personCreatedAt) ?? new Float64Array(n).fill(NaN), from);
    const moved = new Map<string, Map<number, Record<string, unknown>>>();
    for (const name of view.names()) {
      // Its own columns: the rows' overflow objects are copied as they are below (a column derived from them here
      // would cost a pass over every overflow object per column, and copy their values twice).
      const source = view.ownDict(name);
      if (!source) continue;
      const kind = name.startsWith(EVENT_PROP) ? this.eventProps : name.startsWith(PERSON_PROP) ? this.personProps : null;
      if (kind === null && (name === COL.propertiesOverflow || name === COL.personPropertiesOverflow)) continue; // below
      let target: DictBuilder | undefined;
      if (kind === null) target = this.column(this.dicts, name);
      else {
        const key = name.slice(kind.prefix.length);
        target = kind.columns.get(key);
        if (!target && key.length <= MAX_COLUMN_KEY && kind.columns.size < MAX_PROPERTY_COLUMNS) kind.columns.set(key, (target = new DictBuilder(this.capacity)));
        if (!target) {
          let rows = moved.get(kind.overflow);
          if (!rows) moved.set(kind.overflow, (rows = new Map()));
          for (let i = 0; i < n; i++) {
            const c = source.codes[i]!;
            if (c === 0) continue;
            let o = rows.get(i);
            if (!o) rows.set(i, (o = {}));
            setOwn(o, key, source.values[c - 1]);
          }
          continue;
        }
      }
      const remap = source.values.map((v) => target.dictionary.codeOf(v));
      for (let i = 0; i < n; i++) {
        const c = source.codes[i]!;
        if (c !== 0) target.setCode(from + i, remap[c - 1]!);
      }
    }
    for (const name of [COL.propertiesOverflow, COL.personPropertiesOverflow]) {
      const source = view.dict(name);
      const extra = moved.get(name);
      if (!source && !extra) continue;
      const target = this.column(this.dicts, name);
      for (let i = 0; i < n; i++) {
        const c = source ? source.codes[i]! : 0;
        const more = extra?.get(i);
        if (c === 0 && !more) continue;
        const value = c === 0 ? JSON.stringify(more) : more ? JSON.stringify(Object.assign({}, overflowObject(source!.values[c - 1]), more)) : source!.values[c - 1];
        target.set(from + i, value);
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
    for (const columns of [this.dicts, this.eventProps.columns, this.personProps.columns]) {
      for (const col of columns.values()) col.truncate(n);
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
    for (const [key, col] of this.eventProps.columns) put(EVENT_PROP + key, col);
    for (const [key, col] of this.personProps.columns) put(PERSON_PROP + key, col);
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
    // Rows added later are written past `n` and values only ever appended, so views of the live arrays stay exact;
    // a sparse column's codes are laid out only if a reader asks for them.
    const captured = new Map<string, LazyDict>();
    const capture = (name: string, col: DictBuilder) => captured.set(name, { codes: col.denseView(n), values: col.dictionary.values });
    for (const [name, col] of this.dicts) capture(name, col);
    for (const [key, col] of this.eventProps.columns) capture(EVENT_PROP + key, col);
    for (const [key, col] of this.personProps.columns) capture(PERSON_PROP + key, col);
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
    for (const columns of [this.dicts, this.eventProps.columns, this.personProps.columns]) for (const col of columns.values()) col.grow(this.capacity);
  }
}

/** A dictionary column's rows [from, to), re-numbered densely in order of first use; null if no row has a value. */
function compactDict(col: DictBuilder, from: number, to: number): ColumnData | null {
  if (!col.anyIn(from, to)) return null;
  const size = col.dictionary.size;
  if (remapScratch.length <= size) remapScratch = new Uint32Array(Math.max(size + 1, remapScratch.length * 2));
  const remap = remapScratch;
  const all = col.dictionary.values;
  const values: unknown[] = [];
  // `remap` is all zeros between calls: only the codes this range uses are set, and reset after (a sparse column's
  // range may be a handful of rows of a large dictionary).
  const used: number[] = [];
  col.forEachIn(from, to, (_row, c) => {
    if (remap[c] === 0) {
      remap[c] = values.push(all[c - 1]);
      used.push(c);
    }
  });
  const codes = codeArrayFor(values.length, to - from);
  col.forEachIn(from, to, (row, c) => (codes[row - from] = remap[c]!));
  for (const c of used) remap[c] = 0;
  return { kind: 'dict', codes, values };
}

/** A dictionary column of a snapshot whose codes are laid out on first read. */
interface LazyDict {
  codes: () => Uint32Array;
  values: readonly unknown[];
}

/** A block view over arrays in memory (the open block's snapshot). */
class MemoryBlock implements BlockView {
  private readonly read = new Map<string, DictColumn>();

  constructor(
    readonly n: number,
    readonly minTs: number,
    readonly maxTs: number,
    private readonly fixed: Map<string, Float64Array | Uint32Array>,
    private readonly dicts: Map<string, LazyDict>,
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
    return withOverflow(this, name, this.own(name));
  }

  ownDict(name: string): DictColumn | null {
    return this.own(name);
  }

  private own(name: string): DictColumn | null {
    let col = this.read.get(name);
    if (col) return col;
    const lazy = this.dicts.get(name);
    if (!lazy) return null;
    col = { codes: lazy.codes(), values: lazy.values };
    this.read.set(name, col);
    return col;
  }

  kinds(): [string, ColumnKind][] {
    return [...this.fixed].map(([name, a]) => [name, a instanceof Float64Array ? 'f64' : 'u32'] as [string, ColumnKind])
      .concat([...this.dicts.keys()].map((name) => [name, 'dict'] as [string, ColumnKind]));
  }
}
