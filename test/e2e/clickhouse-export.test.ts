// The ClickHouse export (QUILL_CLICKHOUSE_URL): every acknowledged event, person, merge and group reaches PostHog's
// tables exactly once, across kill -9 of Quill and while ClickHouse is unavailable. ClickHouse is chdb behind its
// HTTP interface in a child process (bench/lib/clickhouse-process.ts), reached by Quill's real client over HTTP.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseProcess } from '../../bench/lib/clickhouse-process.js';
import { eventually } from '../helpers/eventually.js';
import { event, personOf, sendBatch } from '../helpers/ingest.js';
import { Client, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';

const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

async function withClickHouse(t: Tap.Test): Promise<ClickHouseProcess> {
  const ch = new ClickHouseProcess(mkdtempSync(join(tmpdir(), 'quill-ch-')));
  await ch.start();
  t.teardown(async () => {
    // A failure is explained by what ClickHouse said, too (its errors, or that it died).
    if (process.env.QUILL_TEST_DUMP || !t.passing()) console.error(`ClickHouse shim output:\n${ch.output}`);
    await ch.stop();
    removeDir(ch.dataDir);
  });
  return ch;
}

function exportEnv(ch: ClickHouseProcess, extra: Record<string, string> = {}): Record<string, string> {
  return { QUILL_CLICKHOUSE_URL: ch.url, QUILL_CLICKHOUSE_DATABASE: 'posthog', ...extra };
}

async function count(ch: ClickHouseProcess, sql: string): Promise<number> {
  const [row] = await ch.query<{ n: string | number }>(sql, 'posthog');
  return Number(row?.n ?? 0);
}

/** Waits until ClickHouse holds `n` event rows (without FINAL), then a moment more to see that no copy follows. */
async function eventsArrive(ch: ClickHouseProcess, n: number): Promise<void> {
  await eventually(`${n} events in ClickHouse`, async () => (await count(ch, 'SELECT count() AS n FROM events')) >= n, WAIT);
}

t.test('a mixed load: events, persons, merges across shards, groups and person-less events', async (t) => {
  const ch = await withClickHouse(t);
  const q = await startQuill({ env: exportEnv(ch), workers: 2 });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const api = new Client(q.base);
  const sent: string[] = [];
  const send = async (batch: ReturnType<typeof event>[]) => {
    const res = await sendBatch(q.base, batch);
    t.equal(res.status, 200, 'batch acknowledged');
    for (const e of batch) sent.push(e.uuid);
  };
  // 40 visitors, each an anonymous id that later identifies as a user id (the two hash to different shards for
  // many of them), with $set, and pageviews on both ids.
  for (let v = 0; v < 40; v++) {
    const anon = `anon-${v}`;
    const user = `user-${v}@example.com`;
    await send([
      event(anon, '$pageview', { $current_url: `https://example.com/${v}`, $set: { plan: 'free' } }),
      event(anon, '$pageview', { $current_url: 'https://example.com/pricing' }),
      event(user, '$identify', { $anon_distinct_id: anon, $set: { email: user, plan: v % 2 ? 'pro' : 'free' } }),
      event(user, 'purchase', { price: v, $groups: { company: `co-${v % 3}` } }),
    ]);
  }
  await send([
    event('co-admin', '$groupidentify', { $group_type: 'company', $group_key: 'co-1', $group_set: { name: 'Company One' } }),
    event('robot-1', 'ping', { $process_person_profile: false }),
    event('robot-1', 'ping', { $process_person_profile: false }),
  ]);
  await eventsArrive(ch, sent.length);

  t.equal(await count(ch, 'SELECT count() AS n FROM events'), sent.length, 'each acknowledged event once, without FINAL');
  t.equal(await count(ch, 'SELECT count() AS n FROM events FINAL'), sent.length, 'and with FINAL');
  const uuids = await ch.query<{ uuid: string }>('SELECT toString(uuid) AS uuid FROM events', 'posthog');
  t.same(new Set(uuids.map((r) => r.uuid)), new Set(sent), 'the acknowledged uuids, no other');

  // Every distinct id resolves (argMax by version) to the person Quill has for it, with Quill's properties.
  for (const v of [0, 1, 7, 39]) {
    const person = await personOf(api, `user-${v}@example.com`);
    t.ok(person, `Quill has the person of user-${v}`);
    const resolved = await eventually(`user-${v}'s ids resolved in ClickHouse`, async () => {
      const rows = await ch.query<{ distinct_id: string; person_id: string }>(
        `SELECT distinct_id, toString(argMax(person_id, version)) AS person_id FROM person_distinct_id2
         WHERE team_id = 1 AND distinct_id IN ('anon-${v}', 'user-${v}@example.com') GROUP BY distinct_id
         HAVING argMax(is_deleted, version) = 0`, 'posthog');
      return rows.length === 2 && rows.every((r) => r.person_id === person.uuid) ? rows : null;
    }, WAIT);
    t.equal(resolved.length, 2, `both ids of visitor ${v} resolve to Quill's person`);
    const [row] = await ch.query<{ properties: string; is_deleted: number }>(
      `SELECT argMax(properties, version) AS properties, argMax(is_deleted, version) AS is_deleted FROM person WHERE team_id = 1 AND id = '${person.uuid}'`, 'posthog');
    t.same(JSON.parse(row!.properties), person.properties, `person ${v}: Quill's properties`);
    t.equal(Number(row!.is_deleted), 0, 'not deleted');
  }
  // A merge that joined two persons leaves the merged-away one deleted: the live persons are Quill's (one per
  // visitor and the $groupidentify sender; none for the person-less robot).
  const quillPersons = (await api.get('/api/projects/@current/persons/?limit=1000')).body.results as { uuid: string }[];
  t.equal(quillPersons.length, 41, 'Quill has 41 persons');
  const live = await eventually('persons settled', async () => {
    const rows = await ch.query<{ id: string }>('SELECT toString(id) AS id FROM person FINAL WHERE team_id = 1 AND is_deleted = 0', 'posthog');
    return rows.length === quillPersons.length ? rows : null;
  }, WAIT);
  t.same(new Set(live.map((r) => r.id)), new Set(quillPersons.map((p) => p.uuid)), "the live persons in ClickHouse are Quill's");

  // Person columns of an event are the person's after the apply; person-less events get PostHog's derived id.
  const [purchase] = await ch.query<{ person_id: string; person_properties: string; mode: string; g0: string }>(
    `SELECT toString(person_id) AS person_id, person_properties, toString(person_mode) AS mode, \`$group_0\` AS g0
     FROM events WHERE event = 'purchase' AND distinct_id = 'user-7@example.com'`, 'posthog');
  const p7 = await personOf(api, 'user-7@example.com');
  t.equal(purchase!.person_id, p7.uuid, 'an event carries its person');
  t.equal(JSON.parse(purchase!.person_properties).plan, 'pro', 'and its properties');
  t.equal(purchase!.g0, 'co-1', '$group_0 is materialized from the properties');
  const robots = await ch.query<{ person_id: string; mode: string; props: string }>(
    `SELECT toString(person_id) AS person_id, toString(person_mode) AS mode, properties AS props FROM events WHERE distinct_id = 'robot-1'`, 'posthog');
  t.equal(robots.length, 2, 'person-less events are exported');
  t.equal(new Set(robots.map((r) => r.person_id)).size, 1, 'with one derived person id');
  t.ok(robots.every((r) => r.mode === 'propertyless'), "person_mode 'propertyless'");
  const [group] = await eventually('the group in ClickHouse', async () =>
    (await ch.query<{ props: string }>(`SELECT argMax(group_properties, _timestamp) AS props FROM groups WHERE team_id = 1 AND group_key = 'co-1' GROUP BY group_key`, 'posthog'))
      .filter((g) => JSON.parse(g.props).name === 'Company One'), WAIT);
  t.ok(group, 'a $groupidentify reaches the groups table');

  // Deleting a person in Quill deletes it and its distinct ids in ClickHouse.
  const p0 = await personOf(api, 'user-0@example.com');
  t.equal((await api.delete(`/api/projects/@current/persons/${p0.uuid}/`)).status, 204);
  await eventually('the deleted person marked', async () =>
    (await count(ch, `SELECT count() AS n FROM person FINAL WHERE id = '${p0.uuid}' AND is_deleted = 1`)) === 1, WAIT);
  t.equal(await count(ch, `SELECT count() AS n FROM person_distinct_id2 FINAL WHERE distinct_id IN ('anon-0', 'user-0@example.com') AND is_deleted = 1`), 2,
    'its distinct ids are marked deleted');

  const stats = await api.get('/_stats');
  t.equal(stats.status, 200);
  t.ok(Array.isArray(stats.body.export?.shards) && stats.body.export.shards.length > 0, '/_stats shows the exporters');
  t.ok(stats.body.export.shards.every((s: { error: string | null }) => s.error === null), 'none failing');
});

t.test('deletions are repeated in ClickHouse: a person with its events, and data retention', async (t) => {
  const ch = await withClickHouse(t);
  const q = await startQuill({ env: exportEnv(ch) });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const api = new Client(q.base);
  const day = 86_400_000;
  const now = Date.now();
  const batch = [
    ...Array.from({ length: 20 }, (_, i) => event('leaver', 'visit', { i })),
    ...Array.from({ length: 20 }, (_, i) => event('stayer', 'visit', { i })),
    ...Array.from({ length: 30 }, (_, i) => event(`old-${i}`, 'ancient', {}, { timestamp: new Date(now - (40 + i) * day).toISOString() })),
    ...Array.from({ length: 10 }, (_, i) => event(`new-${i}`, 'recent', {}, { timestamp: new Date(now - i * day).toISOString() })),
  ];
  t.equal((await sendBatch(q.base, batch)).status, 200);
  await eventsArrive(ch, batch.length);

  const leaver = await personOf(api, 'leaver');
  t.equal((await api.delete(`/api/projects/@current/persons/${leaver.uuid}/?delete_events=true`)).status, 204);
  await eventually("the person's events deleted in ClickHouse", async () => (await count(ch, "SELECT count() AS n FROM events WHERE distinct_id = 'leaver'")) === 0, WAIT);
  t.equal(await count(ch, "SELECT count() AS n FROM events WHERE distinct_id = 'stayer'"), 20, "another person's events stay");

  t.equal((await api.patch('/api/projects/@current/', { event_retention_days: 30 })).status, 200);
  await eventually('events past the retention deleted in ClickHouse', async () => (await count(ch, "SELECT count() AS n FROM events WHERE event = 'ancient'")) === 0, WAIT);
  t.equal(await count(ch, "SELECT count() AS n FROM events WHERE event = 'recent'"), 10, 'events within the retention stay');
  t.equal(await count(ch, 'SELECT count() AS n FROM events'), 30, 'nothing else was deleted');
});

t.test('ClickHouse unavailable: ingestion goes on, the lag shows, everything arrives once it is back', async (t) => {
  const ch = await withClickHouse(t);
  const metricsToken = 'export-metrics-token-0123';
  const q = await startQuill({ env: exportEnv(ch, { QUILL_METRICS_TOKEN: metricsToken }) });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const api = new Client(q.base);
  const first = Array.from({ length: 50 }, (_, i) => event(`u-${i}`, 'before'));
  t.equal((await sendBatch(q.base, first)).status, 200);
  await eventsArrive(ch, 50);

  await ch.stop();
  const during = Array.from({ length: 300 }, (_, i) => event(`u-${i % 60}`, 'during', { i }));
  for (let i = 0; i < during.length; i += 100) t.equal((await sendBatch(q.base, during.slice(i, i + 100))).status, 200, 'acknowledged while ClickHouse is down');
  const lagging = await eventually('the lag and the failure in /_stats', async () => {
    const s = (await api.get('/_stats')).body;
    const shards = s.export.shards as { lagEvents: number; error: string | null }[];
    return shards.reduce((a, x) => a + x.lagEvents, 0) >= 300 && shards.some((x) => x.error !== null) ? shards : null;
  }, WAIT);
  t.ok(lagging.length > 0, 'the lag counts the events not exported, and the error is shown');
  const metrics = await api.withKey(metricsToken).get('/metrics');
  t.match(metrics.text, /quill_export_lag_events\{shard="\d+"\} [1-9]/, '/metrics shows the lag');

  await ch.start();
  await eventsArrive(ch, 350);
  t.equal(await count(ch, 'SELECT count() AS n FROM events'), 350, 'everything once, without FINAL');
  await eventually('the lag back to zero', async () => {
    const shards = (await api.get('/_stats')).body.export.shards as { lagEvents: number; error: string | null }[];
    return shards.every((x) => x.lagEvents === 0 && x.error === null);
  }, WAIT);
  t.pass('lag back to zero, no error');
});

t.test('back-pressure policy: past the lag bound, new requests get 503 with Retry-After', async (t) => {
  const ch = await withClickHouse(t);
  const q = await startQuill({ env: exportEnv(ch, { QUILL_CLICKHOUSE_LAG_POLICY: 'backpressure', QUILL_CLICKHOUSE_MAX_LAG: '100' }), workers: 1 });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  await ch.stop();
  let refused: Response | null = null;
  let acknowledged = 0;
  for (let i = 0; i < 10 && !refused; i++) {
    const batch = Array.from({ length: 40 }, (_, k) => event(`bp-${k}`, 'load'));
    const res = await sendBatch(q.base, batch);
    if (res.status === 200) acknowledged += batch.length;
    else refused = res;
  }
  t.ok(refused, 'a request was refused once the lag passed 100 events');
  t.equal(refused!.status, 503);
  t.ok(Number(refused!.headers.get('retry-after')) > 0, 'with Retry-After');
  t.equal((await refused!.json()).code, 'export_behind', 'and says why');
  await ch.start();
  await eventsArrive(ch, acknowledged);
  await eventually('requests accepted again', async () => (await sendBatch(q.base, [event('bp-late', 'late')])).status === 200, WAIT);
  await eventsArrive(ch, acknowledged + 1);
  t.equal(await count(ch, 'SELECT count() AS n FROM events'), acknowledged + 1, 'every acknowledged event once');
});

t.test('backfill: a directory loaded before the export was configured, while new events keep coming', async (t) => {
  const ch = await withClickHouse(t);
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-test-'));
  t.teardown(() => removeDir(dataDir));
  const sent = new Set<string>();
  const first = await startQuill({ dataDir });
  const api1 = new Client(first.base);
  for (let b = 0; b < 30; b++) {
    const batch = Array.from({ length: 200 }, (_, i) => event(`old-${(b * 200 + i) % 700}`, 'before export', { b }));
    if (b % 10 === 0) batch.push(event(`user-${b}`, '$identify', { $anon_distinct_id: `old-${b}`, $set: { email: `user-${b}@example.com` } }));
    if (b === 5) batch.push(event('admin', '$groupidentify', { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } }));
    t.equal((await sendBatch(first.base, batch)).status, 200);
    for (const e of batch) sent.add(e.uuid);
  }
  const stored = await api1.get('/api/projects/@current/events/?limit=1&event=before%20export');
  t.equal(stored.body.results.length, 1, 'the first load is being stored');
  // Killed: some of it is applied, the rest waits in the ingest logs, so the apply is still at work when the
  // export starts below and takes its starting point.
  await first.stop('SIGKILL');

  // Export on; events keep arriving from the first moment.
  const q = await startQuill({ dataDir, env: exportEnv(ch) });
  t.teardown(async () => {
    await q.stop();
  });
  const api = new Client(q.base);
  for (let b = 0; b < 10; b++) {
    const batch = Array.from({ length: 100 }, (_, i) => event(`old-${(b * 100 + i) % 700}`, 'after export', { b }));
    t.equal((await sendBatch(q.base, batch)).status, 200);
    for (const e of batch) sent.add(e.uuid);
  }
  await eventually('every event in ClickHouse', async () => (await count(ch, 'SELECT count() AS n FROM events')) >= sent.size, { timeoutMs: 120_000, intervalMs: 500 });
  await new Promise((r) => setTimeout(r, 1_500));
  const rows = await ch.query<{ uuid: string; n: string }>('SELECT toString(uuid) AS uuid, count() AS n FROM events GROUP BY uuid', 'posthog');
  t.equal(rows.filter((r) => Number(r.n) > 1).length, 0, 'no event twice without FINAL: the backfill and the log exporters did not overlap');
  t.same(new Set(rows.map((r) => r.uuid)), sent, 'every event stored before and acknowledged after');

  const stats = await eventually('the backfill done in /_stats', async () => {
    const shards = (await api.get('/_stats')).body.export.shards as { backfill: { blocks: number; events: number; done: boolean } }[];
    return shards.every((s) => s.backfill?.done) ? shards : null;
  }, WAIT);
  t.ok(stats.reduce((n, s) => n + s.backfill.events, 0) >= 6_000, 'the backfill exported the stored events');
  t.ok(stats.some((s) => s.backfill.blocks > 0), 'from their blocks');

  // Persons and groups stored before are there too.
  const person = await personOf(api, 'user-10');
  const resolved = await eventually('persons backfilled', async () => {
    const r = await ch.query<{ person_id: string }>(`SELECT toString(argMax(person_id, version)) AS person_id FROM person_distinct_id2 WHERE distinct_id IN ('old-10', 'user-10') GROUP BY distinct_id`, 'posthog');
    return r.length === 2 ? r : null;
  }, WAIT);
  t.ok(resolved.every((r) => r.person_id === person.uuid), "both ids of a merged person resolve to Quill's person");
  t.equal(await count(ch, `SELECT count() AS n FROM person FINAL WHERE is_deleted = 0`), (await api.get('/api/projects/@current/persons/?limit=1000')).body.results.length, "every one of Quill's persons");
  t.equal(await count(ch, `SELECT count() AS n FROM groups WHERE group_key = 'acme'`), 1, 'the group');
});

t.test('kill -9 of Quill during the export, several rounds: each acknowledged uuid exactly once', async (t) => {
  const ch = await withClickHouse(t);
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-test-'));
  t.teardown(() => removeDir(dataDir));
  const acknowledged = new Set<string>();
  const rounds = Number(process.env.QUILL_EXPORT_KILL_ROUNDS ?? 2);
  let q: QuillProcess | null = null;
  for (let round = 0; round < rounds; round++) {
    q = await startQuill({ dataDir, env: exportEnv(ch) });
    const server = q;
    // Batches keep coming while the exporters work; the kill lands at a random moment of it.
    let sending = true;
    const sender = (async () => {
      let n = 0;
      while (sending) {
        const batch = Array.from({ length: 200 }, (_, i) => event(`k-${(n * 7 + i) % 500}`, 'load', { round, n }));
        n++;
        try {
          const res = await sendBatch(server.base, batch);
          if (res.status === 200) for (const e of batch) acknowledged.add(e.uuid);
        } catch {
          /* the connection died with the kill: not acknowledged */
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 300 + Math.random() * 1500));
    await server.stop('SIGKILL');
    sending = false;
    await sender;
  }
  q = await startQuill({ dataDir, env: exportEnv(ch) });
  t.teardown(async () => {
    await q!.stop();
  });
  t.ok(acknowledged.size > 0, `${acknowledged.size} events acknowledged over ${rounds} kills`);
  await eventually('every acknowledged event in ClickHouse', async () => {
    const present = new Set((await ch.query<{ uuid: string }>('SELECT toString(uuid) AS uuid FROM events', 'posthog')).map((r) => r.uuid));
    return [...acknowledged].every((u) => present.has(u));
  }, { timeoutMs: 120_000, intervalMs: 500 });
  // A moment more: a batch redone after a kill would land now if deduplication failed.
  await new Promise((r) => setTimeout(r, 2_000));
  const rows = await ch.query<{ uuid: string; n: string }>('SELECT toString(uuid) AS uuid, count() AS n FROM events GROUP BY uuid', 'posthog');
  const copies = rows.filter((r) => Number(r.n) > 1);
  t.equal(copies.length, 0, 'no event twice without FINAL (the deduplication tokens did their work)');
  const exported = new Set(rows.map((r) => r.uuid));
  t.equal([...acknowledged].filter((u) => !exported.has(u)).length, 0, 'every acknowledged event exported');
  t.equal(await count(ch, 'SELECT count() AS n FROM events FINAL'), rows.length, 'FINAL agrees');
});
