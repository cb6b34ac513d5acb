// What a block costs is linear in what was sent, whatever its shape: one wide event, or many events each with names
// no other event has, give a block at most MAX_PROPERTY_COLUMNS property columns of each kind, the rest kept per row
// as one overflow object, and sparse columns cost their values, not a row each. Every property reads back exactly —
// through a single property's column (derived from the overflow), through whole rows, in the open block, its
// durable chunk records after a restart, and sealed blocks — on a real LMDB environment.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { EventStore } from '../../src/stores/events/event-store.js';
import { BlockBuilder, COL, EVENT_PROP, PERSON_PROP, type ScanEvent } from '../../src/stores/scan/block-builder.js';
import { ColumnCache } from '../../src/stores/scan/column-cache.js';
import { DictBuilder } from '../../src/stores/scan/dict-builder.js';
import { MAX_COLUMN_KEY, MAX_PROPERTY_COLUMNS, NEW_COLUMNS_PER_EVENT } from '../../src/stores/scan/overflow.js';
import { propertiesReader } from '../../src/stores/scan/row-properties.js';
import { SEAL_EVENTS } from '../../src/stores/scan/scan-store.js';

const TEAM = 7;
const T0 = Date.UTC(2026, 10, 1);

function event(i: number, properties: Record<string, unknown>, personProperties: Record<string, unknown> = {}): ScanEvent {
  return {
    uuid: `u-${i}`, ts: T0 + i * 1000, event: i === 0 ? 'wide' : 'many', distinctId: `d${i % 13}`, personId: 1 + (i % 13),
    personUuid: `p${i % 13}`, personCreatedAt: T0, properties, personProperties, elementsChain: '',
  };
}

function wideProps(n: number, prefix = 'p'): Record<string, unknown> {
  const props: Record<string, unknown> = {};
  for (let k = 0; k < n; k++) props[`${prefix}${k}`] = k % 3 === 0 ? `v${k}` : k;
  return props;
}

t.test('a sparse column costs its values, and turns dense when most rows have one', async (t) => {
  const col = new DictBuilder(32_768);
  col.set(5, 'a');
  col.set(900, 'b');
  t.notOk(col.isDense, 'two values: sparse');
  t.ok(col.approxBytes() < 1024, `a few hundred bytes (${col.approxBytes()})`);
  t.equal(col.codeAt(5), 1);
  t.equal(col.codeAt(900), 2);
  t.equal(col.codeAt(6), 0);
  const before = col.denseView(1000);
  for (let row = 1000; row < 30_000; row++) col.set(row, row % 5);
  t.ok(col.isDense, 'past 1/16 of the rows: dense');
  t.equal(col.codeAt(900), 2, 'values kept across the change');
  t.equal(before()[900], 2, 'a view taken before sees its rows');
  t.equal(before().length, 1000);
  col.truncate(950);
  t.equal(col.codeAt(1000), 0, 'truncated rows are gone');
  t.equal(col.codeAt(900), 2);
});

t.test('one wide event opens at most NEW_COLUMNS_PER_EVENT columns; the rest of its row is one overflow object', async (t) => {
  const b = new BlockBuilder(1024);
  const wide = wideProps(5_000);
  b.add(event(0, wide));
  for (let i = 1; i < 2_000; i++) b.add(event(i, { $browser: 'Chrome', i }));
  t.equal(b.propertyColumns.event, NEW_COLUMNS_PER_EVENT + 2, 'the wide event opened 256 columns, later events their own two');
  // Linear in what was sent: far from 5,000 columns × 2,048 rows × 4 bytes (41 MB).
  t.ok(b.approxBytes() < 4 * 1024 * 1024, `the block holds ${Math.round(b.approxBytes() / 1024)} KB`);
  const view = b.snapshot();
  const read = propertiesReader(view, EVENT_PROP);
  t.same(read(0), wide, 'the wide row reads back whole');
  t.same(read(1), { $browser: 'Chrome', i: 1 });
  t.same(view.dict(EVENT_PROP + 'p4999')!.values, [4999], 'a property in the overflow reads as a column');
  t.equal(view.dict(EVENT_PROP + 'p4999')!.codes[0], 1);
  t.equal(view.dict(EVENT_PROP + 'p4999')!.codes[1], 0);
  t.equal(view.dict(EVENT_PROP + 'nope'), null, 'an unknown property has no column');
});

t.test('names no other event has fill at most MAX_PROPERTY_COLUMNS columns; keys too long for a column overflow', async (t) => {
  const b = new BlockBuilder(1024);
  const sent: Record<string, unknown>[] = [];
  for (let i = 0; i < 1_000; i++) {
    const props = wideProps(100, `e${i}_`);
    if (i === 3) props['k'.repeat(MAX_COLUMN_KEY + 1)] = 'long';
    sent.push(props);
    b.add(event(i, props, props));
  }
  t.equal(b.propertyColumns.event, MAX_PROPERTY_COLUMNS, 'event property columns stop at the bound');
  t.equal(b.propertyColumns.person, MAX_PROPERTY_COLUMNS, 'person property columns too');
  t.ok(b.approxBytes() < 64 * 1024 * 1024, `${Math.round(b.approxBytes() / 1024 / 1024)} MB for 100,000 values`);
  const view = b.snapshot();
  const events = propertiesReader(view, EVENT_PROP);
  const persons = propertiesReader(view, PERSON_PROP);
  for (const i of [0, 3, 9, 10, 500, 999]) {
    t.same(events(i), sent[i], `row ${i}: event properties`);
    t.same(persons(i), sent[i], `row ${i}: person properties`);
  }
  t.same(view.dict(EVENT_PROP + 'k'.repeat(MAX_COLUMN_KEY + 1))!.values, ['long']);
});

t.test('stored: chunk records read back after a restart, sealed blocks, the events API', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quill-overflow-'));
  let store = new EventStore(dir, new ColumnCache(64 * 1024 * 1024), 0);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const wide = wideProps(3_000);
  const unique = (i: number) => ({ [`only_${i}`]: i, $browser: 'Firefox' });
  const events = [event(0, wide, wideProps(400, 'pp'))];
  for (let i = 1; i < SEAL_EVENTS + 500; i++) events.push(event(i, unique(i)));
  for (let i = 0; i < events.length; i += 2_000) await store.write(() => store.add(TEAM, events.slice(i, i + 2_000)));
  t.equal(store.columns.stats().sealedBlocks, 1, 'one sealed block and an open one');
  // The sealed block: its columns stay bounded whatever the names.
  const sealed = store.columns.blocks(TEAM)[0]!;
  t.ok(sealed.names(EVENT_PROP).length <= MAX_PROPERTY_COLUMNS, `${sealed.names(EVENT_PROP).length} event property columns`);
  t.same(store.get(TEAM, 'u-0')!.properties, wide, 'the wide event by uuid');
  t.same(store.get(TEAM, `u-${SEAL_EVENTS + 100}`)!.properties, unique(SEAL_EVENTS + 100), 'an event of the open block by uuid');
  t.same(store.get(TEAM, 'u-20000')!.properties, unique(20_000), 'an overflowed event of the sealed block');
  t.same(sealed.dict(EVENT_PROP + 'only_20000')!.values, [20_000]);
  t.same(sealed.dict(PERSON_PROP + 'pp398')!.values, [398], 'person properties overflow too');
  t.same(sealed.dict(COL.event)!.values, ['wide', 'many']);

  await store.close();
  store = new EventStore(dir, new ColumnCache(64 * 1024 * 1024), 0);
  t.same(store.get(TEAM, `u-${SEAL_EVENTS + 499}`)!.properties, unique(SEAL_EVENTS + 499), 'after a restart, from the chunk records');
  const open = store.columns.blocks(TEAM).at(-1)!;
  t.ok(open.names(EVENT_PROP).length <= MAX_PROPERTY_COLUMNS, 'the reloaded open block is bounded too');
});

t.test('a block written before the bounds is bounded when it is read back into an open block', async (t) => {
  // A packed record with more columns than the bound (written by an older Quill): addBlock moves the excess.
  const unbounded = new BlockBuilder(64);
  const props = wideProps(3_000);
  unbounded.add(event(0, {}));
  const source = unbounded.snapshot();
  const columns = new Map<string, { codes: Uint32Array; values: unknown[] }>();
  for (const [k, v] of Object.entries(props)) columns.set(EVENT_PROP + k, { codes: Uint32Array.of(1), values: [v] });
  const view = {
    n: 1, minTs: source.minTs, maxTs: source.maxTs, has: (name: string) => columns.has(name) || source.has(name),
    names: (prefix = '') => [...source.names(prefix), ...[...columns.keys()].filter((n) => n.startsWith(prefix))],
    f64: (name: string) => source.f64(name), u32: (name: string) => source.u32(name),
    dict: (name: string) => columns.get(name) ?? source.dict(name),
    ownDict: (name: string) => columns.get(name) ?? source.ownDict(name),
  };
  const b = new BlockBuilder(64);
  b.addBlock(view);
  t.equal(b.propertyColumns.event, MAX_PROPERTY_COLUMNS);
  t.same(propertiesReader(b.snapshot(), EVENT_PROP)(0), props, 'every property kept');
});
