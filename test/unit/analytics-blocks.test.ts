import t from 'tap';

/** Whether `fn` throws an instance of `type` (tap matches thrown errors by shape, not class). */
function throwsA(tt: { ok(v: unknown, m?: string): void }, fn: () => unknown, type: new (...a: never[]) => Error, message: string): void {
  try {
    fn();
    tt.ok(false, `${message}: did not throw`);
  } catch (error) {
    tt.ok(error instanceof type, message);
  }
}
import { BlockBuilder, COL, type ScanEvent } from '../../src/stores/scan/block-builder.js';
import { packBlock, PackedBlock, type BlockView } from '../../src/stores/scan/column-block.js';
import { applyFormula, parseFormula, seriesValues, smooth } from '../../src/domain/analytics/trends-values.js';
import { mergePartials, popcount, quantile, type Partial } from '../../src/domain/analytics/aggregates.js';
import { AnalyticsInputError } from '../../src/domain/analytics/errors.js';

function events(n: number): ScanEvent[] {
  const shared = { plan: 'pro' };
  return Array.from({ length: n }, (_, i) => ({
    uuid: `e${i}`, ts: 1000 + i, event: i % 2 ? '$pageview' : 'signup', distinctId: `d${i % 3}`, personId: (i % 3) + 1, personUuid: `p${i % 3}`,
    personCreatedAt: i % 4 === 0 ? NaN : 500, elementsChain: i % 5 === 0 ? 'a:nth-child="1"nth-of-type="1"' : '',
    properties: { n: i, s: `v${i % 2}`, o: i === 3 ? { deep: [1, 'x'] } : undefined, nul: i === 2 ? null : undefined, tf: i % 2 === 0 },
    personProperties: i < 5 ? shared : { plan: 'free', other: i },
  }));
}

function rows(view: BlockView): unknown[] {
  const out: unknown[] = [];
  const ts = view.f64(COL.ts)!;
  for (let i = 0; i < view.n; i++) {
    const row: Record<string, unknown> = { ts: ts[i], person: view.u32(COL.personId)![i], created: view.f64(COL.personCreatedAt)![i] };
    for (const name of view.names()) {
      const d = view.dict(name);
      if (d && d.codes[i] !== 0) row[name] = d.values[d.codes[i]! - 1];
    }
    out.push(row);
  }
  return out;
}

t.test('a block keeps every value exactly, through packing and partial ranges', async (t) => {
  const b = new BlockBuilder(4);
  const evs = events(40);
  for (const e of evs) b.add(e);
  const whole = rows(b.snapshot());
  t.equal(whole.length, 40);
  t.match(whole[3], { 'p:o': { deep: [1, 'x'] }, 'p:n': 3, 'p:s': 'v1', 'pp:plan': 'pro', event: '$pageview', distinct_id: 'd0', uuid: 'e3', person_uuid: 'p0' });
  t.match(whole[2], { 'p:nul': null }, 'null is a value, not absence');
  t.notOk('p:nul' in (whole[4] as object), 'absent stays absent');
  t.match(whole[20], { 'pp:plan': 'free', 'pp:other': 20 });
  const { minTs, maxTs, columns } = b.columns(10, 25);
  const packed = new PackedBlock(packBlock(15, minTs, maxTs, columns));
  t.same(rows(packed), whole.slice(10, 25), 'a packed range reads back the same rows');
  t.equal(packed.minTs, 1010);
  t.equal(packed.maxTs, 1024);
  const rebuilt = new BlockBuilder();
  rebuilt.addBlock(packed);
  rebuilt.addBlock(new PackedBlock(packBlock(15, minTs, maxTs, columns)));
  t.same(rows(rebuilt.snapshot()), [...whole.slice(10, 25), ...whole.slice(10, 25)], 'blocks append to a builder');
});

t.test('a snapshot does not change when the builder goes on, nor after a truncate', async (t) => {
  const b = new BlockBuilder(2);
  const evs = events(10);
  for (const e of evs.slice(0, 5)) b.add(e);
  const snap = b.snapshot();
  const before = rows(snap);
  for (const e of evs.slice(5)) b.add(e);
  b.truncate(3);
  t.same(rows(snap), before);
  t.equal(b.size, 3);
  b.add(evs[9]!);
  t.match(rows(b.snapshot())[3], { 'p:n': 9 }, 'rows after a truncate are fresh');
  t.notOk('elements_chain' in (rows(b.snapshot())[3] as object) && evs[9]!.elementsChain === '', 'no stale codes');
});

t.test('series numbers from states', async (t) => {
  const sets = [new Uint32Array([0b101, 0]), new Uint32Array([0b110, 1]), null];
  const persons = { kind: 'persons' as const, sets };
  t.same(seriesValues(persons, 'dau', [[0], [1], [2]], false), [2, 3, 0]);
  t.same(seriesValues(persons, 'weekly_active', [[0, 1], [1, 2]], false), [4, 3], 'windows are unions, not sums');
  t.same(seriesValues(persons, 'dau', [[0], [1], [2]], true), [2, 4, 4], 'cumulative distinct persons');
  t.equal(popcount(new Uint32Array([0xffffffff, 1])), 33);
  t.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
  t.equal(quantile([10], 0.9), 10);
  const a: Partial = new Map([['x', { kind: 'count', counts: new Float64Array([1, 2]) }]]);
  mergePartials(a, new Map([['x', { kind: 'count', counts: new Float64Array([3, 4]) }], ['y', { kind: 'count', counts: new Float64Array([5, 6]) }]]));
  t.same([...a.keys()], ['x', 'y']);
  t.same([...(a.get('x') as { counts: Float64Array }).counts], [4, 6]);
  t.same(smooth([1, 2, 3, 4], 2), [1, 1, 2, 3]);
  t.same(applyFormula(parseFormula('(A + B) / C', 3), [[1, 2], [3, 4], [2, 0]], 2), [2, 0], 'division by zero gives 0');
  t.same(applyFormula(parseFormula('A ^ 2 - -1', 1), [[3]], 1), [10]);
  throwsA(t, () => parseFormula('A + D', 3), AnalyticsInputError, '');
  throwsA(t, () => parseFormula('(A + B', 2), AnalyticsInputError, '');
});
