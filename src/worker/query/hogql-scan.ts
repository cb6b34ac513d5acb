/**
 * The shard side of a HogQL events scan (src/domain/hogql/plan.ts `EventsScan`): every worker reads the blocks of
 * the shards it owns that the query's time bounds reach, filters them with the query's WHERE (a mask per block,
 * src/domain/hogql/vectors.ts) and answers either its partial GROUP BY states or its best rows for the query's
 * ORDER BY + LIMIT. The coordinating worker merges the answers (src/worker/query/hogql-exec.ts).
 *
 * A scan yields to its thread's other work every few milliseconds, as the analyses' scans do
 * (src/worker/analytics/scatter.ts): acknowledgements and flag answers never wait behind a query.
 */
import { AnalyticsInputError } from '../../domain/analytics/errors.js';
import { AGGREGATES } from '../../domain/hogql/aggregate-functions.js';
import { hogqlError } from '../../domain/hogql/errors.js';
import { bind } from '../../domain/hogql/bind.js';
import { GroupTable, TopRows, type BoundAgg, type Groups } from '../../domain/hogql/grouping.js';
import type { AggSpec, ColumnRef, EventsScan } from '../../domain/hogql/plan.js';
import { codedVec, constVec, filterRows, vec, type Batch, type Vec, type VecCache } from '../../domain/hogql/vectors.js';
import type { Type, Value, ValueContext } from '../../domain/hogql/values.js';
import type { FilterNode } from '../../domain/analytics/property-filters.js';
import { COL, EVENT_PROP, PERSON_PROP } from '../../stores/scan/block-builder.js';
import { propertiesReader } from '../../stores/scan/row-properties.js';
import type { BlockView } from '../../stores/scan/column-block.js';
import { rowMask } from '../analytics/block-filter.js';
import { scanEnvOf, type ScanContext } from '../analytics/scatter.js';
import { Slicer } from '../analytics/slices.js';
import type { ScanEnv } from '../analytics/series-scan.js';
import type { PeerMessage } from '../peers.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import { hogqlValueContext } from './hogql-values.js';

export const HOGQL_SCAN = 'hogql.scan';


export interface ScanLimits {
  /** Rows a scan may return without a LIMIT (materialised inputs of joins). */
  maxRows: number;
  maxGroups: number;
}

interface ScanMessage extends PeerMessage {
  scan: EventsScan;
  ctx: ScanContext;
  limits: ScanLimits;
}

/** A shard's answer; a query error met on a shard (too many rows, a bad value) comes back as `error`. */
export type ScanReply = { groups: Groups } | { rows: { keys: Value[]; row: Value[] }[] } | { error: string };

/** Runs an events scan on every worker; the answers in worker order. */
export function scanEverywhere(rt: WorkerRuntime, scan: EventsScan, ctx: ScanContext, limits: ScanLimits): Promise<ScanReply[]> {
  return rt.peers.all<ScanReply>({ kind: HOGQL_SCAN, scan, ctx, limits } satisfies ScanMessage);
}

export function personWords(maxPersonId: number): number {
  return (maxPersonId >>> 5) + 1;
}

export function bindAgg(a: AggSpec, values: ValueContext): BoundAgg {
  return { name: a.name, def: AGGREGATES[a.name]!, args: a.args.map((e) => bind(e, values)), params: a.params, cond: a.cond && bind(a.cond, values) };
}

/** A sort key's value: persons order by their uuid, everything else by its value. */
export function sortValue(v: Value, type: Type, values: ValueContext): Value {
  return type === 'Person' && v !== null ? values.personUuid(v as number) : v;
}

export const hogqlScanHandler: PeerHandler = async (rt, msg) => {
  try {
    return await runScan(rt, msg as ScanMessage);
  } catch (error) {
    if (error instanceof AnalyticsInputError) return { error: error.message } satisfies ScanReply;
    throw error;
  }
};

async function runScan(rt: WorkerRuntime, { scan, ctx, limits }: ScanMessage): Promise<ScanReply> {
  // Persons are written by every thread: read the newest merges, persons and groups.
  rt.persons.env.resetReadTxn();
  const env = scanEnvOf(rt, ctx);
  const values = hogqlValueContext(rt, ctx.team, ctx.timeZone, ctx.now);
  const where = scan.where ? bind(scan.where, values) : null;
  const blocks: BlockView[] = [];
  for (const shard of rt.ingest.shards.values()) blocks.push(...shard.events.columns.blocks(ctx.team, scan.from, scan.to));
  const slicer = new Slicer();
  /** The rows of a block the WHERE keeps; vectors built afterwards need only those. */
  const selected = (batch: BlockBatch, cache: VecCache) => {
    const sel = where === null ? { rows: Int32Array.from({ length: batch.n }, (_, i) => i), count: batch.n } : filterRows(where, batch, values, cache);
    batch.selected = sel;
    return sel;
  };

  if (scan.aggregate) {
    const keys = scan.aggregate.keys.map((k) => bind(k, values));
    const aggs = scan.aggregate.aggs.map((a) => bindAgg(a, values));
    const table = new GroupTable(keys, aggs, personWords(ctx.maxPersonId), limits.maxGroups);
    for (const block of blocks) {
      const batch = new BlockBatch(block, env);
      const cache: VecCache = new Map();
      const { rows, count } = selected(batch, cache);
      table.add(batch, rows, count, values, cache);
      batch.done();
      await slicer.pace();
    }
    return { groups: table.groups };
  }

  const spec = scan.rows!;
  const columns = spec.columns.map((c) => bind(c, values));
  const order = spec.order.map((o) => ({ b: bind(o.expr, values), desc: o.desc, nullsFirst: o.nullsFirst }));
  const out: { keys: Value[]; row: Value[] }[] = [];
  const rowOf = (vs: Vec[], row: number) => vs.map((v) => v.at(row));
  if (order.length === 0) {
    // Any rows will do: stop at the limit.
    const limit = spec.limit ?? limits.maxRows + 1;
    for (const block of blocks) {
      if (out.length >= limit) break;
      const batch = new BlockBatch(block, env);
      const cache: VecCache = new Map();
      const { rows, count } = selected(batch, cache);
      const vs = columns.map((c) => vec(c, batch, values, cache));
      for (let k = 0; k < count && out.length < limit; k++) out.push({ keys: [], row: rowOf(vs, rows[k]!) });
      batch.done();
      if (spec.limit === null && out.length > limits.maxRows) tooMany(limits.maxRows);
      await slicer.pace();
    }
    return { rows: out };
  }

  // Ordered: keep the best rows by their sort keys; compute the columns of the winners only.
  const top = new TopRows<[number, number]>(order, spec.limit, limits.maxRows);
  const first = spec.order[0]!.expr;
  const byTime = first.k === 'col' && first.ref.k === 'ev' && first.ref.col.c === 'timestamp';
  const desc = order[0]!.desc;
  // Ordered by time: the blocks that may hold the first rows come first, and a block that cannot beat the rows
  // already kept is skipped whole.
  if (byTime) blocks.sort((a, b) => (desc ? b.maxTs - a.maxTs : a.minTs - b.minTs));
  for (let bi = 0; bi < blocks.length; bi++) {
    const block = blocks[bi]!;
    const bar = top.bar;
    if (byTime && bar !== null && bar[0] !== null && (desc ? block.maxTs < (bar[0] as number) : block.minTs > (bar[0] as number))) continue;
    const batch = new BlockBatch(block, env);
    const cache: VecCache = new Map();
    const { rows, count } = selected(batch, cache);
    const keyVecs = order.map((o) => vec(o.b, batch, values, cache));
    const types = order.map((o) => o.b.type);
    for (let k = 0; k < count; k++) {
      const row = rows[k]!;
      top.offer(keyVecs.map((v, i) => sortValue(v.at(row), types[i]!, values)), [bi, row]);
    }
    batch.done();
    await slicer.pace();
  }
  const winners = top.result();
  const byBlock = new Map<number, number[]>();
  winners.forEach((w, i) => {
    const list = byBlock.get(w.ref[0]) ?? [];
    list.push(i);
    byBlock.set(w.ref[0], list);
  });
  const rowsOut = new Array<{ keys: Value[]; row: Value[] }>(winners.length);
  for (const [bi, indices] of byBlock) {
    const batch = new BlockBatch(blocks[bi]!, env);
    const cache: VecCache = new Map();
    const vs = columns.map((c) => vec(c, batch, values, cache));
    for (const i of indices) rowsOut[i] = { keys: winners[i]!.keys, row: rowOf(vs, winners[i]!.ref[1]) };
    batch.done();
  }
  return { rows: rowsOut };
}

function tooMany(max: number): never {
  return hogqlError(`The query reads more than ${max.toLocaleString('en-US')} events into memory; add conditions or a LIMIT.`);
}

/** Scratch arrays lent to block batches (a thread evaluates one block at a time: scans interleave between blocks). */
const pool: Int32Array[] = [];

/** One block of the scan layout as a batch of rows. Call `done()` when the block's evaluation is over. */
export class BlockBatch implements Batch {
  readonly n: number;
  readonly timeRange: [number, number];
  selected: { rows: Int32Array; count: number } | null = null;
  private readonly columns = new Map<string, Vec>();
  private readonly lent: Int32Array[] = [];

  constructor(
    private readonly block: BlockView,
    private readonly env: ScanEnv,
  ) {
    this.n = block.n;
    this.timeRange = [block.minTs, block.maxTs];
  }

  column(ref: ColumnRef, _type: Type): Vec {
    if (ref.k !== 'ev') throw new Error(`internal: an events scan reads ${ref.k} columns`);
    const key = JSON.stringify(ref.col);
    let v = this.columns.get(key);
    if (!v) {
      v = this.read(ref);
      this.columns.set(key, v);
    }
    return v;
  }

  filterMask(node: FilterNode): Uint8Array {
    return rowMask(node, this.block, this.env);
  }

  scratch(n: number): Int32Array {
    let at = -1;
    for (let i = 0; i < pool.length; i++) if (pool[i]!.length >= n && (at < 0 || pool[i]!.length < pool[at]!.length)) at = i;
    const buffer = at < 0 ? new Int32Array(Math.max(n, 32_768)) : pool.splice(at, 1)[0]!;
    this.lent.push(buffer);
    return buffer.subarray(0, n);
  }

  /** Returns the scratch arrays: nothing of this batch's vectors may be read afterwards. */
  done(): void {
    for (const b of this.lent) if (pool.length < 16) pool.push(b);
    this.lent.length = 0;
  }

  private read(ref: Extract<ColumnRef, { k: 'ev' }>): Vec {
    const b = this.block;
    const col = ref.col;
    switch (col.c) {
      case 'timestamp':
      case 'person_created_at': {
        const f64 = b.f64(col.c === 'timestamp' ? COL.ts : COL.personCreatedAt);
        if (!f64) return constVec(null);
        const range: [number, number] | undefined = col.c === 'timestamp' ? [b.minTs, b.maxTs] : undefined;
        return { f64, range, at: (row) => (f64[row] !== f64[row] ? null : f64[row]!) };
      }
      case 'person_id': {
        const u32 = this.env.resolvedPersons(b);
        return { u32, at: (row) => u32[row] || null };
      }
      case 'uuid':
        return this.dict(COL.uuid, null);
      case 'event':
      case 'distinct_id':
        return this.dict(col.c === 'event' ? COL.event : COL.distinctId, null);
      case 'elements_chain':
        return this.dict(COL.elementsChain, '');
      case 'prop':
        return this.dict(EVENT_PROP + col.key, null);
      case 'pprop':
        return this.dict(PERSON_PROP + col.key, null);
      case 'properties':
        return this.object(EVENT_PROP);
      case 'person_properties':
        return this.object(PERSON_PROP);
    }
  }

  /** A dictionary column as a coded vector (code 0, absent, is `absent`). */
  private dict(name: string, absent: Value): Vec {
    const d = this.block.dict(name);
    if (!d) return constVec(absent);
    return codedVec(d.codes, [absent, ...(d.values as Value[])]);
  }

  /** Every property of the row as one object (`properties`, `person.properties`). */
  private object(prefix: string): Vec {
    return { at: propertiesReader(this.block, prefix) };
  }
}

