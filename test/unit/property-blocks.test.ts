// Property names and values read from the event blocks of real event stores (two shards' LMDB environments, each
// with sealed blocks and an open one), checked against a plain computation over the events stored: names of event
// and person properties with their types, which events carry them, and a property's most recent values; the
// second read (from the per-block caches) answers the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { EventStore } from '../../src/stores/events/event-store.js';
import type { ScanEvent } from '../../src/stores/scan/block-builder.js';
import { ColumnCache } from '../../src/stores/scan/column-cache.js';
import { SEAL_EVENTS } from '../../src/stores/scan/scan-store.js';
import { propertyValues, valuesHandler, type ValuesRequest } from '../../src/worker/ops/events/scatter.js';
import { namesHandler, type NameRow, type NamesRequest } from '../../src/worker/ops/property-definitions/block-names.js';
import type { WorkerRuntime } from '../../src/worker/runtime.js';

const TEAM = 4;
const T0 = Date.UTC(2026, 10, 1);
const EVENTS = ['$pageview', 'signup', 'purchase'];

function makeEvents(n: number, shard: number): ScanEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const event = EVENTS[i % 3]!;
    const properties: Record<string, unknown> = { i, $browser: ['Chrome', 'Safari', 'Firefox', `Browser ${i % 40}`][i % 4] };
    if (event === 'purchase') properties.price = (i % 50) + 0.5;
    if (event === 'signup') properties.beta = i % 2 === 0;
    if (i < 1000) properties.first_seen = '2026-11-01T10:00:00Z';
    if (i % 9 === 0) properties.tags = ['x', `t${i % 5}`];
    return {
      uuid: `s${shard}-${i}`, ts: T0 + i * 1000 + (i % 7 === 0 ? -3_600_000 : 0), event, distinctId: `d${i % 97}`, personId: 1 + (i % 97),
      personUuid: `p${i % 97}`, personCreatedAt: NaN, properties, personProperties: { plan: i % 3 === 0 ? 'pro' : 'free', age: 20 + (i % 30) },
      elementsChain: '',
    };
  });
}

const ask = <T>(handler: (rt: WorkerRuntime, msg: any, from: number) => Promise<unknown>, rt: WorkerRuntime, q: object) =>
  handler(rt, { kind: 'test', ...q }, 0) as Promise<T>;

t.test('names, types, carriers and values from sealed and open blocks of two shards', async (t) => {
  const stores: EventStore[] = [];
  const all: ScanEvent[] = [];
  const dirs: string[] = [];
  t.teardown(async () => {
    for (const s of stores) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  for (const shard of [0, 1]) {
    const dir = mkdtempSync(join(tmpdir(), 'quill-property-blocks-'));
    dirs.push(dir);
    const store = new EventStore(dir, new ColumnCache(256 * 1024 * 1024), shard);
    stores.push(store);
    const events = makeEvents(shard === 0 ? SEAL_EVENTS + 4000 : 3000, shard);
    for (let i = 0; i < events.length; i += 4000) await store.write(() => store.add(TEAM, events.slice(i, i + 4000)));
    await store.write(() => store.add(TEAM + 1, [{ ...events[0]!, uuid: 'other', properties: { elsewhere: 1 }, personProperties: { elsewhere_person: 1 } }]));
    all.push(...events);
  }
  t.equal(stores[0]!.columns.stats().sealedBlocks, 1, 'shard 0: a sealed block and an open one');
  const rt = { ingest: { shards: new Map(stores.map((s, i) => [i, { events: s }])) } } as unknown as WorkerRuntime;

  const expectedEvent: Record<string, string> = { i: 'Numeric', $browser: 'String', price: 'Numeric', beta: 'Boolean', first_seen: 'DateTime', tags: 'String' };
  for (const round of ['read', 'cached']) {
    const rows = await ask<NameRow[]>(namesHandler, rt, { team: TEAM, subject: 'event', eventNames: ['purchase'] } satisfies NamesRequest);
    t.same(Object.fromEntries(rows.map(([name, type]) => [name, type])), expectedEvent, `${round}: event property names and types`);
    const carriedBy = (name: string) => all.some((e) => e.event === 'purchase' && name in e.properties);
    t.same(Object.fromEntries(rows.map(([name, , seen]) => [name, seen])), Object.fromEntries(Object.keys(expectedEvent).map((n) => [n, carriedBy(n)])),
      `${round}: seen on purchase events exactly when one carries it`);
    const persons = await ask<NameRow[]>(namesHandler, rt, { team: TEAM, subject: 'person', eventNames: null } satisfies NamesRequest);
    t.same(persons.sort(), [['age', 'Numeric', false], ['plan', 'String', false]], `${round}: person properties`);
  }

  const valuesOf = async (q: Partial<ValuesRequest>) => {
    const req: ValuesRequest = { team: TEAM, key: '$browser', needle: null, eventNames: null, after: T0 - 86_400_000, limit: 10, maxScan: 1_000_000, ...q };
    const seen = await ask<{ value: string; ts: number }[]>(valuesHandler, rt, req);
    return seen.sort((a, b) => b.ts - a.ts || (a.value < b.value ? -1 : 1)).slice(0, req.limit);
  };
  /** The same from the events themselves: each value's newest time, most recent first. */
  const expectedValues = (key: string, keep: (e: ScanEvent) => boolean, limit = 10) => {
    const newest = new Map<string, number>();
    for (const e of all) {
      if (!keep(e) || !(key in e.properties)) continue;
      for (const v of propertyValues(e.properties[key])) newest.set(v, Math.max(newest.get(v) ?? -Infinity, e.ts));
    }
    return [...newest].map(([value, ts]) => ({ value, ts })).sort((a, b) => b.ts - a.ts || (a.value < b.value ? -1 : 1)).slice(0, limit);
  };
  t.same(await valuesOf({}), expectedValues('$browser', () => true), 'the 10 most recent browsers');
  const withPart = expectedValues('$browser', (e) => String(e.properties.$browser).toLowerCase().includes('browser 1'));
  t.ok(withPart.length > 0);
  t.same(await valuesOf({ needle: 'browser 1' }), withPart, 'with a part of the value');
  t.same(await valuesOf({ key: 'price', eventNames: ['purchase'] }), expectedValues('price', (e) => e.event === 'purchase'), 'of purchases');
  t.same(await valuesOf({ key: 'price', eventNames: ['signup'] }), [], 'no signup carries a price');
  t.same(await valuesOf({ key: 'tags', limit: 3 }), expectedValues('tags', () => true, 3), 'lists flattened');
  const after = T0 + 20_000 * 1000;
  t.same(await valuesOf({ key: 'first_seen', after }), [], 'only events after the window\'s start');
  t.same(await valuesOf({ key: 'i', after, limit: 5 }), expectedValues('i', (e) => e.ts > after, 5), 'numbers as text, in the window');
  t.same(await valuesOf({ key: 'elsewhere' }), [], 'another project\'s property is not read');
});
