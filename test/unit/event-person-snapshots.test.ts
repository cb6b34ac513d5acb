// The person properties each event was applied with, kept for the ClickHouse export
// (src/stores/persons/event-snapshots.ts): what the apply's person processing gave each event (not the person at the
// end of the transaction), read back per log record whichever owners and transactions wrote it, forgotten per source
// once exported.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PersonStore } from '../../src/stores/persons/person-store.js';
import { PersonProcessor } from '../../src/worker/ingest/person-processor.js';
import type { NormalizedEvent } from '../../src/domain/ingest/index.js';

const TEAM = 1;

function ev(uuid: string, distinctId: string, event: string, properties: Record<string, unknown>): NormalizedEvent {
  return { uuid, event, distinct_id: distinctId, properties, timestamp: '2026-11-28T00:00:00.000Z', elements_chain: '' };
}

function openStore(t: Tap.Test): PersonStore {
  const dir = mkdtempSync(join(tmpdir(), 'quill-snapshots-'));
  const store = new PersonStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

t.test("each event's snapshot is the person right after it, within one transaction and across merges", async (t) => {
  const store = openStore(t);
  const events = [
    ev('e1', 'anon', '$pageview', { $set: { plan: 'free' } }),
    ev('e2', 'anon', '$pageview', {}),
    ev('e3', 'anon', '$pageview', { $set: { plan: 'pro' } }),
    ev('e4', 'user', '$pageview', { $set: { plan: 'team', seats: 3 } }),
    // The merge: anon's person joins user's (user's properties win); e5 and anon's next event see the merged person.
    ev('e5', 'user', '$identify', { $anon_distinct_id: 'anon' }),
    ev('e6', 'anon', '$pageview', { $process_person_profile: false }),
    ev('e7', 'guest', '$pageview', { $process_person_profile: false }),
  ];
  await store.write(() => {
    const processor = new PersonProcessor(store, TEAM, {});
    const writer = store.eventSnapshots.writer();
    for (const e of events) {
      const outcome = processor.process(e);
      if (outcome) writer.add(0, 100, e.uuid, outcome.properties);
    }
    processor.flush();
    writer.commit();
  });
  const snapshots = store.eventSnapshots.ofRecord(0, 100);
  t.same(Object.fromEntries(snapshots), {
    e1: '{"plan":"free"}', e2: '{"plan":"free"}', e3: '{"plan":"pro"}', e4: '{"plan":"team","seats":3}',
    e5: '{"plan":"team","seats":3}', e6: '{"plan":"team","seats":3}', e7: '{}',
  }, 'a later $set and a merge leave earlier snapshots alone; personless events: their distinct id\'s person, or none');
  t.equal(store.personByDistinctId(TEAM, 'anon')?.properties.plan, 'team', 'while the person now is the merged one');
});

t.test('entries: one per record and transaction, the distinct snapshots stored once, forgotten per source', async (t) => {
  const store = openStore(t);
  const shared = { plan: 'pro', long: 'x'.repeat(1000) };
  await store.write(() => {
    const writer = store.eventSnapshots.writer();
    for (let i = 0; i < 50; i++) writer.add(0, 100, `a${i}`, shared);
    writer.add(0, 200, 'b1', { plan: 'free' });
    writer.add(1, 100, 'c1', { plan: 'other source' });
    writer.commit();
  });
  // Another owner (or the second half of an isolating apply) writes its events of the same record apart.
  await store.write(() => {
    const writer = store.eventSnapshots.writer();
    writer.add(0, 100, 'z1', { plan: 'second owner' });
    writer.commit();
  });
  const first = store.eventSnapshots.ofRecord(0, 100);
  t.equal(first.size, 51, "both transactions' events of the record");
  t.equal(first.get('a49'), JSON.stringify(shared));
  t.equal(first.get('z1'), '{"plan":"second owner"}');
  t.notOk(first.has('b1'), "another record's events are not the record's");
  const stored = store.env.openDB('event_person_snapshots', { encoder: { useRecords: false } } as object).getBinary([0, 100, 'a0']);
  t.ok(stored !== undefined && stored.length < 2 * 1000, `50 events of one snapshot store its JSON once (${stored?.length} bytes)`);
  t.same([...store.eventSnapshots.ofRecord(0, 200)], [['b1', '{"plan":"free"}']]);
  t.same(store.eventSnapshots.ofRecord(0, 150).size, 0, 'a record nothing was kept for: none');

  t.equal(await store.eventSnapshots.forgetUpTo(0, 100), 2, "source 0's entries of records up to 100");
  t.equal(store.eventSnapshots.ofRecord(0, 100).size, 0);
  t.equal(store.eventSnapshots.ofRecord(0, 200).size, 1, 'a later record is kept');
  t.equal(store.eventSnapshots.ofRecord(1, 100).size, 1, "another source's are kept");
  t.equal(await store.eventSnapshots.forgetUpTo(0, 200), 1);
  t.equal(await store.eventSnapshots.forgetUpTo(0, 200), 0, 'forgetting again forgets nothing');
});

t.test('with its properties, the person each event was applied with, for the exporter not to read it again', async (t) => {
  const store = openStore(t);
  const events = [
    ev('p1', 'anon-2', '$pageview', { $set: { plan: 'free' } }),
    ev('p2', 'user-2', '$pageview', {}),
    // The merge: anon-2's person joins user-2's; p4 is applied with the merged person.
    ev('p3', 'user-2', '$identify', { $anon_distinct_id: 'anon-2' }),
    ev('p4', 'anon-2', '$pageview', {}),
    ev('p5', 'guest-2', '$pageview', { $process_person_profile: false }),
  ];
  const applied = new Map<string, { uuid: string; createdAt: string | null }>();
  await store.write(() => {
    const processor = new PersonProcessor(store, TEAM, {});
    const writer = store.eventSnapshots.writer();
    for (const e of events) {
      const outcome = processor.process(e);
      if (!outcome) continue;
      applied.set(e.uuid, { uuid: outcome.personUuid, createdAt: outcome.createdAt });
      if (outcome.personless) writer.add(0, 300, e.uuid, null);
      else writer.add(0, 300, e.uuid, outcome.properties, outcome.createdAt === null ? undefined : { uuid: outcome.personUuid, createdAt: outcome.createdAt });
    }
    processor.flush();
    writer.commit();
  });
  const persons = new Map<string, { uuid: string; createdAt: string }>();
  const snapshots = store.eventSnapshots.ofRecord(0, 300, persons);
  t.same([...snapshots.keys()].sort(), ['p1', 'p2', 'p3', 'p4', 'p5']);
  t.same([...persons.keys()].sort(), ['p1', 'p2', 'p3', 'p4'], 'a person for each event applied with one; none for the personless one');
  for (const [uuid, person] of persons) t.same(person, applied.get(uuid), `${uuid}: the person its apply gave it`);
  t.not(persons.get('p1')!.uuid, persons.get('p4')!.uuid, "anon-2's events before and after the merge: the person each was applied with");
  t.same(store.eventSnapshots.ofRecord(0, 300), snapshots, 'the properties alike without asking for the persons');
});
