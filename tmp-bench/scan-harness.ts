import { BlockBuilder } from '../src/stores/scan/block-builder.js';
import type { BlockView } from '../src/stores/scan/column-block.js';
import { bind } from '../src/domain/hogql/bind.js';
import { GroupTable } from '../src/domain/hogql/grouping.js';
import { filterRows, type VecCache } from '../src/domain/hogql/vectors.js';
import { BlockBatch, bindAgg } from '../src/worker/query/hogql-scan.js';
import { parseQuery } from '../src/domain/hogql/parser.js';
import { planQuery } from '../src/domain/hogql/planner.js';
import type { ValueContext } from '../src/domain/hogql/values.js';
import { scanBlock } from '../src/worker/analytics/series-scan.js';
import { PersonResolution } from '../src/worker/analytics/person-resolution.js';

const N = Number(process.env.N ?? 2_000_000);
const start = Date.UTC(2026, 9, 1);
const blocks: BlockView[] = [];
let b = new BlockBuilder(32768);
let seed = 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const names = ['$pageview', '$pageview', '$pageview', '$autocapture', 'purchase', '$pageleave'];
for (let i = 0; i < N; i++) {
  const ts = start + Math.floor((i / N) * 30 * 86400000);
  const pid = 1 + Math.floor(rand() * 300000);
  b.add({ ts, event: names[i % names.length]!, distinctId: `d${pid}`, personId: pid, personCreatedAt: NaN, properties: { $browser: 'Chrome', price: i % 100 }, personProperties: { plan: 'free' }, elementsChain: '' });
  if (b.size === 32768) { blocks.push(b.snapshot()); b = new BlockBuilder(32768); }
}
blocks.push(b.snapshot());
const values: ValueContext = { timeZone: process.env.TZNAME ?? 'UTC', now: Date.now(), personUuid: () => null, personOfUuid: () => null, person: () => null, group: () => null };
const env: any = { resolvedPersons: (bl: BlockView) => bl.u32('person_id')!, cohorts: new Map(), groupProperties: () => undefined, dateOf: () => NaN, resolution: { resolveAll: (x: Uint32Array) => x }, maxPersonId: 300001 };

function run(sql: string) {
  const planned = planQuery(parseQuery(sql), { team: 1, timeZone: values.timeZone, now: values.now, filters: null, values: {}, testAccountFilters: null });
  let p: any = planned.plan;
  while (p.k !== 'scan') p = p.input;
  const scan = p.scan;
  const where = scan.where ? bind(scan.where, values) : null;
  const keys = scan.aggregate.keys.map((k: any) => bind(k, values));
  const aggs = scan.aggregate.aggs.map((a: any) => bindAgg(a, values));
  const t0 = process.cpuUsage();
  const table = new GroupTable(keys, aggs, (300001 >>> 5) + 1, 1e6);
  for (const block of blocks) {
    if (block.maxTs < scan.from || block.minTs > scan.to) continue;
    const batch = new BlockBatch(block, env, values);
    const cache: VecCache = new Map();
    const sel = where ? filterRows(where, batch, values, cache) : { rows: Int32Array.from({ length: batch.n }, (_, i) => i), count: batch.n };
    batch.selected = sel;
    table.add(batch, sel.rows, sel.count, values, cache);
    batch.done();
  }
  const d = process.cpuUsage(t0);
  return { ms: (d.user + d.system) / 1000, groups: table.groups.size };
}
const q1 = "SELECT toStartOfDay(timestamp) AS day, count() FROM events WHERE event = '$pageview' AND timestamp >= '2026-10-01' AND timestamp < '2026-10-31' GROUP BY day";
const q2 = "SELECT toStartOfDay(timestamp) AS day, uniq(person_id) FROM events WHERE event = '$pageview' AND timestamp >= '2026-10-01' AND timestamp < '2026-10-31' GROUP BY day";
const best = (f: () => number) => { let m = Infinity; for (let r = 0; r < 15; r++) m = Math.min(m, f()); return m.toFixed(1); };
console.log('hogql count/day', best(() => run(q1).ms), 'dau', best(() => run(q2).ms));
// legacy scan for reference
const bucketStarts = Array.from({ length: 30 }, (_, d) => start + d * 86400000);
for (const measure of (process.env.SKIP_LEGACY ? [] : [{ kind: 'count' }, { kind: 'persons' }]) as any[]) {
  console.log('legacy', measure.kind, best(() => {
    const t0 = process.cpuUsage();
    const out = new Map();
    const lenv: any = { ...env, resolution: PersonResolution.of({ mergesOf: () => [] } as any, 1, 300001) };
    for (const block of blocks) scanBlock(block, { team: 1, event: '$pageview', filter: null, from: start, to: start + 30 * 86400000 - 1, bucketStarts, bucketEnd: start + 30 * 86400000 - 1, measure, breakdown: null, persons: null }, lenv, out);
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / 1000;
  }));
}
