// The event store keeps events only as column blocks: reading them back in (timestamp, uuid) order must merge
// blocks whose time ranges overlap (events arrive out of order), look one up by uuid in sealed and open blocks,
// count by name from the day counters plus the first day's blocks, and forget the uuids and counts of what it
// removes. Checked against a plain sort of what was stored, on a real LMDB environment with several sealed blocks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { EventStore, type StoredEvent } from '../../src/stores/events/event-store.js';
import { COL, type ScanEvent } from '../../src/stores/scan/block-builder.js';
import type { BlockView } from '../../src/stores/scan/column-block.js';
import { ColumnCache } from '../../src/stores/scan/column-cache.js';
import { SEAL_EVENTS } from '../../src/stores/scan/scan-store.js';

const TEAM = 3;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1);

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function makeEvents(n: number): ScanEvent[] {
  const rand = random(17);
  return Array.from({ length: n }, (_, i) => {
    // Mostly in arrival order, one in five from anywhere in the week; whole seconds so that timestamps tie.
    const ts = rand() < 0.8 ? T0 + Math.floor((i / n) * 7 * 86_400) * 1000 : T0 + Math.floor(rand() * 7 * 86_400) * 1000;
    const properties: Record<string, unknown> = { i, $browser: ['Chrome', 'Safari'][i % 2] };
    if (i % 7 === 0) properties.nested = { a: [i, 'x'] };
    if (i === 5) Object.defineProperty(properties, '__proto__', { value: 'kept', enumerable: true, writable: true, configurable: true });
    return {
      uuid: `0190-${(i * 7919 % 100_003).toString(16).padStart(6, '0')}-${i}`, ts, event: ['$pageview', 'signup', '$autocapture'][i % 3]!,
      distinctId: `d${i % 101}`, personId: i % 101 === 0 ? 0 : (i % 101), personUuid: i % 101 === 0 ? '' : `p${i % 101}`,
      personCreatedAt: NaN, properties, personProperties: {}, elementsChain: i % 11 === 0 ? 'a:href="/x"' : '',
    };
  });
}

function order(ascending: boolean): (a: ScanEvent, b: ScanEvent) => number {
  const dir = ascending ? 1 : -1;
  return (a, b) => dir * (a.ts - b.ts || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
}

function take<T>(it: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  for (const x of it) {
    if (out.length === n) break;
    out.push(x);
  }
  return out;
}

t.test('events stored in blocks read back in order, by uuid, counted and removed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quill-event-store-'));
  let store = new EventStore(dir, new ColumnCache(256 * 1024 * 1024), 0);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const events = makeEvents(2 * SEAL_EVENTS + 5000);
  for (let i = 0; i < events.length; i += 3000) {
    await store.write(() => store.add(TEAM, events.slice(i, i + 3000)));
  }
  await store.write(() => store.add(TEAM + 1, [{ ...events[0]!, uuid: 'other-project' }]));
  t.equal(store.columns.stats().sealedBlocks, 2, 'two sealed blocks and an open one');

  const check = (label: string, q: Parameters<EventStore['scan']>[1], keep: (e: ScanEvent) => boolean, n: number) => {
    const lo = q.after ?? -Infinity;
    const hi = q.before ?? Infinity;
    const expected = events.filter((e) => e.ts > lo && e.ts < hi && keep(e)).sort(order(q.ascending === true)).slice(0, n).map((e) => e.uuid);
    t.same(take(store.scan(TEAM, q), n).map((e) => e.uuid), expected, label);
  };
  check('newest first, everything', {}, () => true, events.length);
  check('oldest first, everything', { ascending: true }, () => true, events.length);
  check('a page of the newest', {}, () => true, 100);
  const mid = T0 + 3 * DAY;
  check('between bounds (exclusive)', { after: mid, before: mid + DAY }, () => true, events.length);
  check('by name, oldest first', { event: 'signup', ascending: true, after: mid }, (e) => e.event === 'signup', 500);
  check('by distinct ids', { distinctIds: ['d5', 'd77'] }, (e) => e.distinctId === 'd5' || e.distinctId === 'd77', events.length);
  // More than a few ids take the other lookup (a Set over the dictionary), with ids absent from the store among them.
  const many = Array.from({ length: 40 }, (_, i) => `d${i * 7}`).concat(['nobody', 'd-none']);
  check('by many distinct ids', { distinctIds: many }, (e) => many.includes(e.distinctId), events.length);
  t.same(take(store.scan(TEAM, { distinctIds: ['nobody'] }), 1), [], 'an unknown distinct id matches nothing');
  t.same(take(store.scan(TEAM, { event: 'nope' }), 1), [], 'an unknown name matches nothing');
  t.same(take(store.scan(TEAM, { distinctIds: [] }), 1), [], 'no distinct ids match nothing');

  const whole = (e: ScanEvent): Omit<StoredEvent, 'team'> => ({
    uuid: e.uuid, event: e.event, distinct_id: e.distinctId, person_id: e.personId === 0 ? null : e.personId, person_uuid: e.personUuid,
    timestamp: new Date(e.ts).toISOString(), ts: e.ts, properties: e.properties, elements_chain: e.elementsChain,
  });
  for (const i of [0, 5, 7, 11, SEAL_EVENTS + 3, events.length - 1]) {
    const e = events[i]!;
    t.same(store.get(TEAM, e.uuid), { team: TEAM, ...whole(e) }, `event ${i} by uuid, every field`);
  }
  t.equal(Object.getPrototypeOf(store.get(TEAM, events[5]!.uuid)!.properties), Object.prototype, 'a "__proto__" property stays a property');
  t.equal(store.get(TEAM, 'missing'), undefined);
  t.equal(store.get(TEAM + 1, events[1]!.uuid), undefined, 'uuids are per project');

  const after = T0 + 2 * DAY + 12 * 3600_000;
  t.equal(store.countByName(TEAM, '$pageview', after), events.filter((e) => e.event === '$pageview' && e.ts > after).length, 'counts by name');

  const doomed = new Set(['d5', 'd6']);
  const select = (block: BlockView) => {
    const ids = block.dict(COL.distinctId)!;
    const rows = new Uint8Array(block.n);
    let any = false;
    for (let r = 0; r < block.n; r++) if (doomed.has(ids.values[ids.codes[r]! - 1] as string)) any = Boolean((rows[r] = 1));
    return any ? rows : null;
  };
  // In steps of one block rewritten per transaction, as the person deletion runs them.
  let removed = 0;
  for (let more = true; more; ) {
    const step = await store.write(() => store.removeWhereStep(TEAM, select, 1));
    removed += step.removed;
    more = step.more;
  }
  const gone = events.filter((e) => doomed.has(e.distinctId));
  t.equal(removed, gone.length, 'removed every event of the distinct ids');
  t.notOk(gone.some((e) => store.has(TEAM, e.uuid)), 'their uuids are forgotten');
  const kept = events.filter((e) => !doomed.has(e.distinctId));
  t.equal(store.countByName(TEAM, '$pageview', after), kept.filter((e) => e.event === '$pageview' && e.ts > after).length, 'their counts are gone');

  // Reopened: the open block comes back from its records, the same events in the same order.
  await store.close();
  store = new EventStore(dir, new ColumnCache(256 * 1024 * 1024), 0);
  t.same(take(store.scan(TEAM, {}), kept.length + 1).map((e) => e.uuid), kept.sort(order(false)).map((e) => e.uuid), 'the same after a restart');
});
