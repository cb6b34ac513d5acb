/**
 * The scan layout's storage forms: how a column of a run of one project's events is written and read back.
 *
 * Why columns: an analysis touches a few fields of millions of events (time, name, person, one or two
 * properties). Rows with properties as JSON text would be parsed whole for every event (~0.7 M rows/s); typed
 * arrays are read at memory speed, and a property filter is decided once per distinct value of a block, not once
 * per event (DuckDB's and Parquet's dictionary encoding).
 *
 * Column kinds:
 *   - `f64`: one float64 per event (timestamps in ms, person created_at; NaN = none);
 *   - `u32`: one uint32 per event (person ids; 0 = none);
 *   - `dict`: one code per event (uint8, uint16 or uint32, the narrowest that fits), 0 = absent, and a dictionary:
 *     the JSON array of the distinct values, so code c means `values[c - 1]`. Properties are stored as their JSON
 *     values, so a property column round-trips exactly (JSON.stringify of a value gives the text it was stored from).
 *
 * Two forms use the same column encoding:
 *   - a sealed block keeps each column in its own LMDB value, so a query copies out only the columns it reads;
 *   - a packed block (the apply loop's per-chunk record of the open block, read back only at start-up) is one
 *     buffer: u32 magic, u32 header length, header JSON `{n, minTs, maxTs, cols: {name: [kind, offset, length]}}`,
 *     then the columns.
 */

import { withOverflow } from './overflow.js';

export type CodeArray = Uint8Array | Uint16Array | Uint32Array;
export type ColumnKind = 'f64' | 'u32' | 'dict';

/** A column to write: its per-event data and, for dictionaries, the values (in code order). */
export type ColumnData =
  | { kind: 'f64'; data: Float64Array }
  | { kind: 'u32'; data: Uint32Array }
  | { kind: 'dict'; codes: CodeArray; values: readonly unknown[] };

export interface DictColumn {
  codes: CodeArray;
  /** `values[c - 1]` is the value of code c. */
  values: readonly unknown[];
}

/** What every analysis reads a block through: a sealed block in LMDB, a packed block, or the open block in memory. */
export interface BlockView {
  readonly n: number;
  readonly minTs: number;
  readonly maxTs: number;
  has(name: string): boolean;
  /** Column names starting with `prefix` (e.g. every event property column). */
  names(prefix?: string): string[];
  f64(name: string): Float64Array | null;
  u32(name: string): Uint32Array | null;
  dict(name: string): DictColumn | null;
  /**
   * The block's own dictionary column `name`, without the values its rows' overflow objects hold for that name:
   * for readers that merge each row's overflow object themselves (src/stores/scan/row-properties.ts). Deriving a
   * column from the overflow costs a pass over every overflow object, so a whole-row reader asking `dict` for each
   * of a thousand columns took seconds per block.
   */
  ownDict(name: string): DictColumn | null;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** The narrowest code array for a dictionary of `size` values (code 0 is "absent"). */
export function codeArrayFor(size: number, n: number): CodeArray {
  if (size < 0xff) return new Uint8Array(n);
  if (size < 0xffff) return new Uint16Array(n);
  return new Uint32Array(n);
}

/**
 * One column's bytes. Fixed columns are their typed array's bytes; a dictionary column is u32 code width, u32 value
 * count, the codes (padded to 8 bytes), then the values' JSON array text.
 */
export function encodeColumn(col: ColumnData): Buffer {
  if (col.kind !== 'dict') return Buffer.from(col.data.buffer, col.data.byteOffset, col.data.byteLength);
  const text = JSON.stringify(col.values);
  const codeBytes = col.codes.byteLength;
  const at = align8(8 + codeBytes);
  const out = Buffer.allocUnsafe(at + Buffer.byteLength(text));
  out.writeUInt32LE(col.codes.BYTES_PER_ELEMENT, 0);
  out.writeUInt32LE(col.values.length, 4);
  out.set(new Uint8Array(col.codes.buffer, col.codes.byteOffset, codeBytes), 8);
  out.fill(0, 8 + codeBytes, at);
  out.write(text, at, 'utf8');
  return out;
}

/** Typed arrays need aligned offsets: small buffers come from Node's shared pool at any offset. */
function aligned(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
}

export function decodeF64(bytes: Uint8Array): Float64Array {
  const b = aligned(bytes);
  return new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8);
}

export function decodeU32(bytes: Uint8Array): Uint32Array {
  const b = aligned(bytes);
  return new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}

export function decodeDict(bytes: Uint8Array, n: number): DictColumn {
  const b = aligned(bytes);
  const view = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const width = view.readUInt32LE(0);
  const at = b.byteOffset + 8;
  const codes = width === 1 ? new Uint8Array(b.buffer, at, n) : width === 2 ? new Uint16Array(b.buffer, at, n) : new Uint32Array(b.buffer, at, n);
  const textAt = align8(8 + n * width);
  return { codes, values: JSON.parse(view.toString('utf8', textAt)) as unknown[] };
}

const PACKED_MAGIC = 0x314b4251; // "QBK1"

interface PackedHeader {
  n: number;
  minTs: number;
  maxTs: number;
  cols: Record<string, [ColumnKind, number, number]>;
}

/** One buffer holding a whole block (see the module comment). */
export function packBlock(n: number, minTs: number, maxTs: number, columns: ReadonlyMap<string, ColumnData>): Buffer {
  const cols: PackedHeader['cols'] = {};
  const parts: Buffer[] = [];
  let cursor = 0;
  for (const [name, col] of columns) {
    const bytes = encodeColumn(col);
    cols[name] = [col.kind, cursor, bytes.byteLength];
    parts.push(bytes);
    cursor = align8(cursor + bytes.byteLength);
  }
  const header = Buffer.from(JSON.stringify({ n, minTs, maxTs, cols } satisfies PackedHeader), 'utf8');
  const base = align8(8 + header.byteLength);
  const out = Buffer.alloc(base + cursor);
  out.writeUInt32LE(PACKED_MAGIC, 0);
  out.writeUInt32LE(header.byteLength, 4);
  header.copy(out, 8);
  let at = base;
  for (const p of parts) {
    out.set(p, at);
    at = align8(at + p.byteLength);
  }
  return out;
}

/** A packed block read back (columns decoded on first use). */
export class PackedBlock implements BlockView {
  private readonly header: PackedHeader;
  private readonly base: number;
  private readonly bytes: Uint8Array;
  private readonly dicts = new Map<string, DictColumn>();

  constructor(bytes: Uint8Array) {
    this.bytes = aligned(bytes);
    const view = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    if (view.readUInt32LE(0) !== PACKED_MAGIC) throw new Error('not a packed column block');
    const length = view.readUInt32LE(4);
    this.header = JSON.parse(view.toString('utf8', 8, 8 + length)) as PackedHeader;
    this.base = align8(8 + length);
  }

  get n(): number {
    return this.header.n;
  }
  get minTs(): number {
    return this.header.minTs;
  }
  get maxTs(): number {
    return this.header.maxTs;
  }

  has(name: string): boolean {
    return this.header.cols[name] !== undefined;
  }

  names(prefix = ''): string[] {
    return Object.keys(this.header.cols).filter((name) => name.startsWith(prefix));
  }

  private column(name: string, kind: ColumnKind): Uint8Array | null {
    const c = this.header.cols[name];
    if (!c || c[0] !== kind) return null;
    return this.bytes.subarray(this.base + c[1], this.base + c[1] + c[2]);
  }

  f64(name: string): Float64Array | null {
    const bytes = this.column(name, 'f64');
    return bytes && decodeF64(bytes);
  }

  u32(name: string): Uint32Array | null {
    const bytes = this.column(name, 'u32');
    return bytes && decodeU32(bytes);
  }

  dict(name: string): DictColumn | null {
    return withOverflow(this, name, this.own(name));
  }

  ownDict(name: string): DictColumn | null {
    return this.own(name);
  }

  private own(name: string): DictColumn | null {
    let col = this.dicts.get(name);
    if (col) return col;
    const bytes = this.column(name, 'dict');
    if (!bytes) return null;
    col = decodeDict(bytes, this.header.n);
    this.dicts.set(name, col);
    return col;
  }

  kinds(): [string, ColumnKind][] {
    return Object.entries(this.header.cols).map(([name, c]) => [name, c[0]]);
  }
}
