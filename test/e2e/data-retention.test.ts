// Per-project data retention (`event_retention_days`): a pass deletes exactly the project's events older than the
// retention — rows, day counters (volume_30_day) and the scan layout — and trends agree with what remains.
// Another project without retention keeps everything.
import t from 'tap';
import { allEvents, event, sendBatch } from '../helpers/ingest.js';
import { Client, quillForFile } from '../helpers/quill.js';
import { eventually } from '../helpers/eventually.js';

// A long interval (longer than a Node timer can hold) must still mean "rarely", not "every millisecond".
const server = quillForFile(t, { env: { QUILL_RETENTION_INTERVAL_MINUTES: '100000' } });
const DAY_MS = 86_400_000;
const RETENTION_DAYS = 7;

interface Sent { uuid: string; event: string; timestamp: string }

/** Events over the last 21 days, three hours past each day mark (far from the cutoff, which moves with the clock). */
function history(now: number): ReturnType<typeof event>[] {
  const out: ReturnType<typeof event>[] = [];
  for (let d = 0; d <= 20; d++) {
    for (let k = 0; k < 6; k++) {
      const timestamp = new Date(now - d * DAY_MS - 3 * 3_600_000 - k * 60_000).toISOString();
      out.push(event(`ret-${k % 3}`, k % 2 ? 'ret a' : 'ret b', {}, { timestamp }));
    }
  }
  return out;
}

async function storedEvents(api: Client): Promise<Sent[]> {
  return (await allEvents(api, '')).map((e: { id: string; event: string; timestamp: string }) => ({ uuid: e.id, event: e.event, timestamp: e.timestamp }));
}

async function trend(api: Client, name: string) {
  const res = await api.get(`/api/projects/@current/insights/trend/?events=${encodeURIComponent(JSON.stringify([{ id: name }]))}&date_from=-30d&interval=day&refresh=true`);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body.result[0] as { data: number[]; days: string[]; count: number };
}

async function retentionPasses(api: Client): Promise<{ passes: number; running: boolean; deleted: number }[]> {
  const res = await api.get('/_stats');
  return res.body.shards.map((s: { retention: { passes: number; running: boolean; deletedEvents: number } }) => ({ ...s.retention, deleted: s.retention.deletedEvents }));
}

t.test('PATCH validates event_retention_days', async (t) => {
  const api = server.api;
  t.equal((await api.get('/api/projects/@current/')).body.event_retention_days, null, 'off by default');
  for (const [value, code, detail] of [
    [0, 'min_value', 'Ensure this value is greater than or equal to 1.'],
    ['soon', 'invalid', 'A valid integer is required.'],
    [1.5, 'invalid', 'A valid integer is required.'],
    [100_000, 'max_value', 'Ensure this value is less than or equal to 36500.'],
  ] as const) {
    const res = await api.patch('/api/projects/@current/', { event_retention_days: value });
    t.equal(res.status, 400, String(value));
    t.same(res.body, { type: 'validation_error', code, detail, attr: 'event_retention_days' });
  }
});

t.test('retention deletes exactly the expired events; counters, layout and trends agree', async (t) => {
  const api = server.api;
  const now = Date.now();
  const mine = history(now);
  for (let i = 0; i < mine.length; i += 40) t.equal((await sendBatch(server.q.base, mine.slice(i, i + 40))).status, 200);
  // Another project, no retention: its old events stay.
  const other = await api.post('/api/projects/', { name: 'Keeps everything' });
  t.equal(other.status, 201);
  const theirs = history(now);
  t.equal((await fetch(`${server.q.base}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: other.body.api_token, batch: theirs }) })).status, 200);

  t.equal((await storedEvents(api)).length, mine.length, 'all applied');
  const before = await trend(api, 'ret a');
  t.equal(before.count, mine.filter((e) => e.event === 'ret a').length);
  // The start-up pass (nothing to delete yet) comes first.
  const passesBefore = await eventually('the start-up retention pass', async () => {
    const now = await retentionPasses(api);
    return now.every((s) => s.passes >= 1 && !s.running) ? now : null;
  });
  t.same(passesBefore.map((s) => s.deleted), [0, 0]);

  const patched = await api.patch('/api/projects/@current/', { event_retention_days: RETENTION_DAYS });
  t.equal(patched.status, 200);
  t.equal(patched.body.event_retention_days, RETENTION_DAYS);
  const after = await eventually('a retention pass on every shard', async () => {
    const now = await retentionPasses(api);
    return now.every((s, i) => s.passes > passesBefore[i]!.passes && !s.running) ? now : null;
  });

  const cutoff = now - RETENTION_DAYS * DAY_MS;
  const survivors = mine.filter((e) => Date.parse(e.timestamp as string) >= cutoff);
  t.ok(survivors.length > 0 && survivors.length < mine.length, `${mine.length - survivors.length} of ${mine.length} events are past the retention`);
  t.equal(after.reduce((n, s) => n + s.deleted, 0), mine.length - survivors.length, 'the shards report what they deleted');
  const remaining = await storedEvents(api);
  t.same(remaining.map((e) => e.uuid).sort(), survivors.map((e) => e.uuid).sort(), 'exactly the events within the retention remain');

  // Day counters: volume_30_day is read from them.
  const definitions = (await api.get('/api/projects/@current/event_definitions/')).body.results as { name: string; volume_30_day: number }[];
  for (const name of ['ret a', 'ret b']) {
    t.equal(definitions.find((d) => d.name === name)?.volume_30_day, survivors.filter((e) => e.event === name).length, `volume_30_day of ${name}`);
  }

  // The analytics engine reads the scan layout: every day agrees with the rows that remain.
  const afterTrend = await trend(api, 'ret a');
  const perDay = new Map<string, number>();
  for (const e of remaining) if (e.event === 'ret a') perDay.set(e.timestamp.slice(0, 10), (perDay.get(e.timestamp.slice(0, 10)) ?? 0) + 1);
  t.same(afterTrend.days, before.days);
  t.same(afterTrend.data, afterTrend.days.map((d) => perDay.get(d) ?? 0), 'each day of the trend counts the remaining events');
  t.ok(before.data.slice(0, -RETENTION_DAYS - 1).some((v) => v > 0) && afterTrend.data.slice(0, -RETENTION_DAYS - 1).every((v) => v === 0), 'older days had events and now have none');
  const stats = (await api.get('/_stats')).body.shards as { scan: { sealedEvents: number; openEvents: number } }[];
  t.equal(stats.reduce((n, s) => n + s.scan.sealedEvents + s.scan.openEvents, 0), survivors.length + theirs.length, 'the scan layout shrank with the rows');

  const otherApi = new Client(server.q.base);
  const theirEvents = await otherApi.get(`/api/projects/${other.body.id}/events/?limit=1000`);
  t.equal(theirEvents.body.results.length, theirs.length, 'the project without retention keeps all its events');

  t.equal((await api.patch('/api/projects/@current/', { event_retention_days: null })).body.event_retention_days, null, 'retention can be turned off');
  t.ok((await retentionPasses(api)).every((s) => s.passes <= 4), 'passes ran when asked for, not in a loop');
});
