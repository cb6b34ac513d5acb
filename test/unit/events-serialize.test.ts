import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PersonStore } from '../../src/stores/persons/person-store.js';
import { PersonResolver, serializeEvent, serializeEventJson, type EventRow } from '../../src/worker/ops/events/serialize.js';

// The events list writes each event as JSON text with its stored properties spliced in (serializeEventJson); it
// must be exactly the text of the object view (serializeEvent) that CSV answers and single-event reads use.

const TEAM = 1;

function row(over: Partial<EventRow>): EventRow {
  return {
    uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', event: '$pageview', distinct_id: 'user-1', person_id: null,
    person_uuid: '0190a1b2-0000-5000-8000-000000000000', timestamp: '2026-11-23T01:02:03.004Z', ts: Date.parse('2026-11-23T01:02:03.004Z'),
    properties_json: '{}', elements_chain: '', ...over,
  };
}

t.test('the spliced text equals JSON.stringify of the object view', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quill-serialize-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = new PersonStore(dir);
  t.teardown(() => store.close());
  await store.write(() => {
    store.putPerson({
      id: 7, team: TEAM, uuid: '0190a1b2-0000-5000-8000-000000000007', created_at: '2026-11-01T00:00:00.000Z',
      is_identified: true, version: 0, distinct_ids: ['user-7', 'anon-7'],
      properties: { email: 'a@example.com', name: 'Ada', plan: 'pro', nested: { x: [1, 2] } },
    });
  });

  const properties = [
    {},
    { $current_url: 'https://example.com/?q="quoted"&x=\\', plan: 'pro', cart: 12.5, items: 3, ok: true, none: null },
    { unicode: 'żółw 🐢 \u2028 line', nested: { deep: [1, { a: 'b' }], empty: [] }, big: 1e21, small: 5e-7, neg: -0.5 },
  ];
  const rows = [
    ...properties.map((p, i) => row({ uuid: `0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5${i}`, properties_json: JSON.stringify(p) })),
    row({ person_id: 7, distinct_id: 'anon-7', properties_json: JSON.stringify({ $set: { email: 'a@example.com' } }) }),
    row({ person_id: 99, event: 'gone "person"' }),
    row({ elements_chain: 'button.btn.primary:text="Buy now"nth-child="2"nth-of-type="1";div:attr_id="main"' }),
    // Not written by this version, but read the same way as the object view: no object, no properties.
    row({ properties_json: '[1,2]' }),
    row({ properties_json: 'null' }),
    row({ properties_json: '{"truncated": ' }),
  ];
  // (Assertion names carry the row's index only: a U+2028 in a name would break the TAP stream.)
  rows.forEach((r, i) => {
    const view = serializeEvent(r, new PersonResolver(store, TEAM));
    const text = serializeEventJson(r, new PersonResolver(store, TEAM));
    t.equal(text, JSON.stringify(view), `row ${i}`);
  });
  const withPerson = JSON.parse(serializeEventJson(rows[3]!, new PersonResolver(store, TEAM)));
  t.same(withPerson.person, { is_identified: true, distinct_ids: ['user-7'], properties: { email: 'a@example.com', name: 'Ada' } });
});
