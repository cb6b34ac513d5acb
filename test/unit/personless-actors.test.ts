// Events without a person profile ($process_person_profile: false) as PostHog counts them (src/domain/ingest/
// personless.ts): the pure choice of which person takes which actor's id when a merge creates a person, and the
// person processing on a real persons store (src/worker/ingest/person-processor.ts): one actor per anonymous
// distinct id across transactions, no person or distinct-id row for it, a person later created for it taking its id
// and uuid, one it joins recording it as merged, and the snapshot marker the export reads.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergedPersonPlan, PERSONLESS_CREATED_AT, PERSONLESS_CREATED_AT_MS, personUuid, type NormalizedEvent } from '../../src/domain/ingest/index.js';
import { PERSONLESS_SNAPSHOT } from '../../src/stores/persons/event-snapshots.js';
import { PersonStore } from '../../src/stores/persons/person-store.js';
import { PersonProcessor, type PersonOutcome } from '../../src/worker/ingest/person-processor.js';
import { insertPerson } from '../../src/worker/ops/persons/crud.js';

const TEAM = 1;
const anonymous = { $process_person_profile: false };
let seq = 0;

function ev(distinctId: string, event: string, properties: Record<string, unknown> = {}): NormalizedEvent {
  return { uuid: `e${++seq}`, event, distinct_id: distinctId, properties, timestamp: '2026-11-28T00:00:00.000Z', elements_chain: '' };
}

function openStore(t: Tap.Test): PersonStore {
  const dir = mkdtempSync(join(tmpdir(), 'quill-personless-'));
  const store = new PersonStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

/** Processes the events in one persons write transaction, as the apply does a chunk. */
async function apply(store: PersonStore, events: NormalizedEvent[]): Promise<(PersonOutcome | null)[]> {
  return store.write(() => {
    const processor = new PersonProcessor(store, TEAM, {}, events.length);
    const out = events.map((e) => processor.process(e));
    processor.flush();
    return out;
  });
}

const merges = (store: PersonStore) => Object.fromEntries(store.mergesOf(TEAM));

t.test("PostHog's choice of the person's first distinct id when a merge creates it", async (t) => {
  t.same(mergedPersonPlan('user', 'anon', undefined, undefined), { distinctIds: ['user', 'anon'], adopt: null, merged: null }, 'neither was personless: the target first');
  t.same(mergedPersonPlan('user', 'anon', undefined, 7), { distinctIds: ['anon', 'user'], adopt: 7, merged: null }, 'only the anonymous one: it comes first, no override');
  t.same(mergedPersonPlan('user', 'anon', 5, undefined), { distinctIds: ['user', 'anon'], adopt: 5, merged: null }, 'only the target');
  t.same(mergedPersonPlan('user', 'anon', 5, 7), { distinctIds: ['user', 'anon'], adopt: 5, merged: 7 }, "both: the target's, and an override for the other");
  t.equal(new Date(PERSONLESS_CREATED_AT).getTime(), PERSONLESS_CREATED_AT_MS);
  t.equal(PERSONLESS_CREATED_AT, '1970-01-01T00:00:05.000Z', "PostHog's createFakePerson");
});

t.test('a never-identified visitor: one actor over events and transactions, with no person', async (t) => {
  const store = openStore(t);
  const [a, b] = await apply(store, [ev('anon-1', '$pageview', { ...anonymous, $set: { ignored: 1 } }), ev('anon-1', '$pageleave', anonymous)]);
  const [c] = await apply(store, [ev('anon-1', '$pageview', anonymous)]);
  const [other] = await apply(store, [ev('anon-2', '$pageview', anonymous)]);
  t.match(a, { personUuid: personUuid(TEAM, 'anon-1'), properties: {}, createdAt: PERSONLESS_CREATED_AT, personless: true });
  t.ok(a!.personId! > 0, 'an id from the person sequence');
  t.equal(b!.personId, a!.personId, 'the same actor within a transaction');
  t.equal(c!.personId, a!.personId, 'and in the next one');
  t.not(other!.personId, a!.personId, 'another visitor is another actor');
  t.equal(store.personByDistinctId(TEAM, 'anon-1'), undefined, 'no person');
  t.equal(store.personIdOf(TEAM, 'anon-1'), undefined, 'no distinct-id row');
  t.equal(store.countOf(TEAM), 0);
  t.equal(store.personlessIdOf(TEAM, 'anon-1'), a!.personId);
  t.equal(store.personlessUuid(TEAM, a!.personId!), personUuid(TEAM, 'anon-1'), "the actor's uuid, for showing it");
  t.equal(store.idOfUuid(TEAM, personUuid(TEAM, 'anon-1')), a!.personId, 'and its id by uuid');
  t.ok(store.maxPersonId() >= other!.personId!, 'person bitmaps are sized by the sequence, actors included');
});

t.test('a person created later for the distinct id takes the actor: nothing moves', async (t) => {
  const store = openStore(t);
  const [anon] = await apply(store, [ev('v1', '$pageview', anonymous)]);
  const [full] = await apply(store, [ev('v1', 'signed_up', { $set: { plan: 'pro' } })]);
  t.equal(full!.personId, anon!.personId, "the person has the actor's id");
  t.equal(full!.personUuid, personUuid(TEAM, 'v1'), 'and its uuid');
  t.same(merges(store), {}, 'no override');
  const [after] = await apply(store, [ev('v1', '$pageview', anonymous)]);
  t.match(after, { personId: anon!.personId, properties: { plan: 'pro' } }, "a personless event of a distinct id with a person: the person's");
  t.notOk(after!.personless);
});

t.test('identify after personless events (posthog-js identified_only): the person is the anonymous actor', async (t) => {
  const store = openStore(t);
  const [anon] = await apply(store, [ev('anon', '$pageview', anonymous)]);
  await apply(store, [ev('user@x', '$identify', { $anon_distinct_id: 'anon', $set: { email: 'user@x' } })]);
  const person = store.personByDistinctId(TEAM, 'user@x')!;
  t.equal(person.id, anon!.personId, "PostHog swaps: the anonymous id is the person's first, so its events need no override");
  t.equal(person.uuid, personUuid(TEAM, 'anon'));
  t.same(person.distinct_ids, ['anon', 'user@x']);
  t.equal(store.personByDistinctId(TEAM, 'anon')?.id, person.id);
  t.same(merges(store), {});
});

t.test('identified on a second device: the second anonymous actor is merged into the person', async (t) => {
  const store = openStore(t);
  await apply(store, [ev('phone', '$pageview', anonymous), ev('user', '$identify', { $anon_distinct_id: 'phone' })]);
  const [laptop] = await apply(store, [ev('laptop', '$pageview', anonymous)]);
  await apply(store, [ev('user', '$identify', { $anon_distinct_id: 'laptop' })]);
  const person = store.personByDistinctId(TEAM, 'user')!;
  t.not(laptop!.personId, person.id);
  t.same(merges(store), { [laptop!.personId!]: person.id }, "the laptop's actor resolves to the person (its events move at query time)");
  t.same([...person.distinct_ids].sort(), ['laptop', 'phone', 'user']);
  t.equal(store.personlessIdOf(TEAM, 'laptop'), laptop!.personId, 'the actor keeps its uuid row (the override says where it went)');
});

t.test('both ids of a merge were personless: the target keeps its actor, the other is merged into it', async (t) => {
  const store = openStore(t);
  const [a, b] = await apply(store, [ev('target', '$pageview', anonymous), ev('other', '$pageview', anonymous)]);
  await apply(store, [ev('target', '$create_alias', { alias: 'other' })]);
  const person = store.personByDistinctId(TEAM, 'other')!;
  t.equal(person.id, a!.personId);
  t.equal(person.uuid, personUuid(TEAM, 'target'));
  t.same(merges(store), { [b!.personId!]: a!.personId });
});

t.test('merged into an existing person within one transaction, then deleted: a later visit is a new actor', async (t) => {
  const store = openStore(t);
  await apply(store, [ev('member', 'login', { $set: { plan: 'pro' } })]);
  const [anon] = await apply(store, [ev('visitor-9', '$pageview', anonymous), ev('member', '$identify', { $anon_distinct_id: 'visitor-9' }), ev('visitor-9', '$pageview', anonymous)]);
  const member = store.personByDistinctId(TEAM, 'member')!;
  t.same(merges(store), { [anon!.personId!]: member.id });
  await store.write(() => store.purgePerson(member));
  t.equal(store.personlessIdOf(TEAM, 'visitor-9'), undefined, "the deleted person's actors go with it");
  const [again] = await apply(store, [ev('visitor-9', '$pageview', anonymous)]);
  t.ok(again!.personId! > member.id, 'a new actor');
});

t.test('a person created through the API takes the actors of its distinct ids', async (t) => {
  const store = openStore(t);
  const [a, b] = await apply(store, [ev('imported-1', '$pageview', anonymous), ev('imported-2', '$pageview', anonymous)]);
  const row = await store.write(() => insertPerson(store, TEAM, ['imported-1', 'imported-2'], { name: 'Imported' }));
  t.equal(row.id, a!.personId);
  t.equal(row.uuid, personUuid(TEAM, 'imported-1'));
  t.same(merges(store), { [b!.personId!]: a!.personId });
});

t.test('the export snapshot of an event without a person is a marker, not JSON', async (t) => {
  const store = openStore(t);
  await store.write(() => {
    const writer = store.eventSnapshots.writer();
    writer.add(0, 10, 'a', null);
    writer.add(0, 10, 'b', {});
    writer.add(0, 10, 'c', null);
    writer.commit();
  });
  t.same(Object.fromEntries(store.eventSnapshots.ofRecord(0, 10)), { a: PERSONLESS_SNAPSHOT, b: '{}', c: PERSONLESS_SNAPSHOT });
  t.throws(() => JSON.parse(PERSONLESS_SNAPSHOT), 'never a snapshot of a person');
});
