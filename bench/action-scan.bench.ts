// The scan cost of an action (`node dist/bench/action-scan.bench.js`, after `npm run build`): the analytics
// dataset's events (QUILL_BENCH_EVENTS, default 1,000,000) packed into column blocks in this thread, then a
// per-day count over every block for one event name ($pageview) and for the three-step action of
// bench/lib/action-cases.ts, alternating, 15 rounds each after a warm-up; medians and minimums on stdout as JSON.
// No server, no HTTP, no other thread: the CPU cost of the filter tree alone, which the shared machine's load
// blurs in the end-to-end figure of analytics.bench.ts. Each action round gets a fresh copy of its tree, as a
// scan received from another worker does (so nothing compiled for one round serves the next).
import { stepsOf } from '../src/domain/actions/steps.js';
import { actionFilter } from '../src/domain/analytics/action-filter.js';
import type { Measure } from '../src/domain/analytics/aggregates.js';
import type { FilterNode } from '../src/domain/analytics/property-filters.js';
import { BlockBuilder } from '../src/stores/scan/block-builder.js';
import { PackedBlock, packBlock } from '../src/stores/scan/column-block.js';
import { scanBlock, type ScanEnv, type SeriesScan } from '../src/worker/analytics/series-scan.js';
import { BENCH_ACTION } from './lib/action-cases.js';
import { DEFAULT_DATASET, Dataset } from './lib/analytics-dataset.js';

const EVENTS = Number(process.env.QUILL_BENCH_EVENTS ?? 1_000_000);
const BLOCK = 32_768;
const ROUNDS = 15;

const dataset = new Dataset({ ...DEFAULT_DATASET, events: EVENTS, persons: Math.max(1000, Math.floor(EVENTS / 30)) });
const blocks: PackedBlock[] = [];
let builder = new BlockBuilder();
let count = 0;
const seal = () => {
  const c = builder.columns(0, count);
  blocks.push(new PackedBlock(packBlock(count, c.minTs, c.maxTs, c.columns)));
  builder = new BlockBuilder();
  count = 0;
};
for (const day of dataset.days()) {
  for (const e of day.events) {
    builder.add({
      uuid: e.uuid, ts: Date.parse(e.timestamp), event: e.event, distinctId: e.distinct_id, personId: 1, personUuid: '', personCreatedAt: NaN,
      elementsChain: (e.properties.$elements_chain as string | undefined) ?? '', properties: e.properties, personProperties: {},
    });
    if (++count === BLOCK) seal();
  }
}
if (count > 0) seal();

const from = DEFAULT_DATASET.end - DEFAULT_DATASET.days * 86_400_000;
const to = DEFAULT_DATASET.end - 1;
const starts = Array.from({ length: DEFAULT_DATASET.days }, (_, i) => from + i * 86_400_000);
const measure: Measure = { kind: 'count' };
// A count reads no persons, cohorts or groups.
const env = { cohorts: new Map(), groupProperties: () => undefined, resolvedPersons: () => new Uint32Array(0), dateOf: () => NaN, maxPersonId: 1 } as unknown as ScanEnv;
const tree = actionFilter({ steps: stepsOf(BENCH_ACTION.steps) });
const scan = (event: string | null, filter: FilterNode | null): SeriesScan =>
  ({ team: 1, event, filter, from, to, bucketStarts: starts, bucketEnd: to, measure, breakdown: null, persons: null });
const timed = (q: SeriesScan): number => {
  const started = performance.now();
  const out = new Map();
  for (const block of blocks) scanBlock(block, q, env, out);
  return performance.now() - started;
};

const event: number[] = [];
const action: number[] = [];
for (let i = 0; i <= ROUNDS; i++) {
  const e = timed(scan('$pageview', null));
  const a = timed(scan(null, structuredClone(tree)));
  if (i === 0) continue;
  event.push(e);
  action.push(a);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const r2 = (x: number) => Math.round(x * 100) / 100;
process.stdout.write(`${JSON.stringify({
  bench: 'action-scan', events: EVENTS, blocks: blocks.length,
  single_event_ms: r2(median(event)), action_ms: r2(median(action)), action_to_single_event: r2(median(action) / median(event)),
  single_event_min_ms: r2(Math.min(...event)), action_min_ms: r2(Math.min(...action)),
})}\n`);
