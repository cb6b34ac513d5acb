// Data directories written before events were kept only as column blocks (scan layout version 1) held a row per
// event, and blocks derived from the rows without the uuid column. At start-up such an environment is converted:
// the blocks are built again from the rows and the rows dropped. Every event is then listed and found by uuid as
// before, analyses answer the same, a retried uuid is still stored once, and new events join the converted blocks.
import { mkdtempSync } from 'node:fs';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { shardOf } from '../../src/domain/shard-of.js';
import { openEnv, openTable } from '../../src/stores/lmdb-env.js';
import { PersonStore } from '../../src/stores/persons/person-store.js';
import { allEvents, sendBatch } from '../helpers/ingest.js';
import { Client, removeDir, startQuill } from '../helpers/quill.js';

const enc = encodeURIComponent;
const questions = [
  { events: [{ id: '$pageview' }], breakdown: '$browser' },
  { events: [{ id: '$pageview', math: 'dau' }] },
  { events: [{ id: 'buy', math: 'sum', math_property: 'price' }] },
  { events: [{ id: null }], properties: [{ key: 'plan', value: 'pro', type: 'person' }] },
];

async function answers(api: Client): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const q of questions) {
    const qs = Object.entries({ ...q, date_from: '2026-11-01', date_to: '2026-11-07', refresh: true }).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
    const res = await api.get(`/api/projects/@current/insights/trend/?${qs}`);
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    out.push(res.body.result.map((s: any) => [s.breakdown_value, s.data]));
  }
  return out;
}

/** Rewrites a data directory's events environments as version 1 wrote them: a row per event, no blocks. */
async function toVersion1(dataDir: string, team: number, events: any[]): Promise<void> {
  const persons = new PersonStore(dataDir);
  const shards = readdirSync(join(dataDir, 'shards')).map(Number).sort((a, b) => a - b);
  const envs = shards.map((s) => openEnv(join(dataDir, 'shards', String(s), 'events.mdb')));
  for (const env of envs) {
    const rows = openTable(env, 'events_v2');
    const blockTables = ['scan_meta', 'scan_columns', 'scan_open'].map((name) => env.openDB(name, {}));
    await env.transaction(() => {
      for (const table of blockTables) for (const key of table.getKeys({})) table.remove(key);
      openTable(env, 'state').put('scan_layout', { version: 1 });
      for (const e of events) {
        if (envs[shardOf(team, e.distinct_id, shards.length)] !== env) continue;
        const personId = persons.distinctIds.get([team, e.distinct_id]) ?? null;
        const personUuid = personId === null ? '' : persons.resolve(team, personId)!.uuid;
        rows.put([team, Date.parse(e.timestamp), e.id, e.event, e.distinct_id], [personId, e.timestamp, JSON.stringify(e.properties), e.elements_chain, personUuid]);
      }
    });
  }
  await Promise.all([...envs.map((env) => env.close()), persons.env.close()]);
}

t.test('a version 1 data directory is converted to blocks and answers the same', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-convert-'));
  t.teardown(() => removeDir(dataDir));
  const first = await startQuill({ dataDir });
  const batch = Array.from({ length: 3000 }, (_, i) => ({
    event: i % 4 === 0 ? 'buy' : '$pageview', distinct_id: `u${i % 97}`, uuid: `0190a000-0000-7000-8000-${String(i).padStart(12, '0')}`,
    timestamp: new Date(Date.UTC(2026, 10, 1 + (i % 7), i % 24)).toISOString(),
    properties: { $browser: ['Chrome', 'Safari', 'Edge'][i % 3], price: i % 13, $set: { plan: i % 97 < 30 ? 'pro' : 'free' } },
  }));
  for (let i = 0; i < batch.length; i += 500) t.equal((await sendBatch(first.base, batch.slice(i, i + 500))).status, 200);
  const api1 = new Client(first.base);
  const team = (await api1.get('/api/projects/@current/')).body.id as number;
  const before = await answers(api1);
  const listed = await allEvents(api1, 'after=2026-10-01T00:00:00Z');
  t.equal(listed.length, 3000);
  t.equal(await first.stop(), 0);

  await toVersion1(dataDir, team, listed);

  const converted = await startQuill({ dataDir });
  t.teardown(() => converted.stop());
  const counts = [...converted.output().matchAll(/converted (\d+) stored events/g)].reduce((n, m) => n + Number(m[1]), 0);
  t.equal(counts, 3000, 'every stored event went into the blocks');
  const api = new Client(converted.base);
  t.same(await answers(api), before, 'the same answers');
  const again = await allEvents(api, 'after=2026-10-01T00:00:00Z');
  t.same(again, listed, 'the same events, in the same order, every field');
  const one = await api.get(`/api/projects/@current/events/${listed[10].id}/`);
  t.equal(one.status, 200);
  t.same(one.body, listed[10], 'found by uuid');

  // A retried uuid is still stored once; a new event joins the converted blocks.
  t.equal((await sendBatch(converted.base, [batch[0], { ...batch[1], uuid: undefined, distinct_id: 'late', timestamp: '2026-11-03T10:00:00Z' }])).status, 200);
  t.equal((await allEvents(api, 'after=2026-10-01T00:00:00Z')).length, 3001, 'the retry was not stored again');
  const after = await answers(api) as [string, number[]][][];
  const chrome = after[0]!.find(([value]) => value === 'Chrome')!;
  const chromeBefore = (before[0] as [string, number[]][]).find(([value]) => value === 'Chrome')!;
  t.equal(chrome[1][2], chromeBefore[1][2]! + (batch[1]!.properties.$browser === 'Chrome' ? 1 : 0));
  t.equal(after[0]!.reduce((n, [, data]) => n + data.reduce((a, b) => a + b, 0), 0), (before[0] as [string, number[]][]).reduce((n, [, data]) => n + data.reduce((a, b) => a + b, 0), 0) + 1, 'one more pageview');

  // The rows are gone after the conversion.
  t.equal(await converted.stop(), 0);
  for (const shard of readdirSync(join(dataDir, 'shards'))) {
    const env = openEnv(join(dataDir, 'shards', shard, 'events.mdb'));
    t.equal((openTable(env, 'events_v2').getStats() as { entryCount: number }).entryCount, 0, `shard ${shard} has no rows left`);
    await env.close();
  }
});
