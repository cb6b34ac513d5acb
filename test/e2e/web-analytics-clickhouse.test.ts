// Web analytics answered by ClickHouse (QUILL_ANALYTICS=clickhouse): one Quill exporting into chdb and answering
// from it, one on its own engine, fed the same sessions (some switching distinct id at sign-up, some crossing the
// periods' bounds, some around the 10-second bounce limit). WebOverviewQuery must answer the same on both, with and
// without compare and filters, in UTC and in New York; what ClickHouse does not compute yet falls back and says so.
import t from 'tap';
import { event } from '../helpers/ingest.js';
import type { Client } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 20);
const RANGE = { date_from: '2026-10-28', date_to: '2026-11-03' };

function dataset(): ReturnType<typeof event>[][] {
  const batches: ReturnType<typeof event>[][] = [];
  for (let k = 0; k < 60; k++) {
    const user = `user-${k % 17}`;
    const anon = `anon-${k}`;
    const batch: ReturnType<typeof event>[] = [];
    let ts = START + ((k * 7) % 16) * DAY + ((k * 5) % 24) * 3_600_000 + (k % 4 === 0 ? 23 * 3_600_000 + 59 * 60_000 : 0);
    const pages = 1 + (k % 4);
    for (let i = 0; i < pages; i++) {
      const id = k % 3 === 0 && i === 0 ? anon : user;
      if (k % 3 === 0 && i === 1) batch.push(event(user, '$identify', { $anon_distinct_id: anon, $session_id: `s-${k}` }, { timestamp: new Date(ts - 50).toISOString() }));
      const source = i === 0 ? [{ $referring_domain: '$direct' }, { $referring_domain: 'www.google.com' }, { $referring_domain: 'www.google.com', utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'fall' }, { $referring_domain: '$direct', gclid: 'x1' }, {}][k % 5] : {};
      batch.push(event(id, '$pageview', { $session_id: `s-${k}`, $current_url: `https://x.test/${['a', 'b', 'c'][(i + k) % 3]}?q=${k}`, $pathname: `/${['a', 'b', 'c'][(i + k) % 3]}`, $browser: k % 2 ? 'Chrome' : 'Safari', ...source }, { timestamp: new Date(ts).toISOString() }));
      if (k % 5 === 0) batch.push(event(id, '$autocapture', { $session_id: `s-${k}`, $event_type: 'click', $external_click_url: `https://partner.test/${k % 2 ? 'a' : 'b'}?ref=${k}` }, { timestamp: new Date(ts + 300).toISOString() }));
      ts += 3_000 + ((k * 11) % 9) * 1_000;
    }
    batches.push(batch);
  }
  return batches;
}

const engines = twoEngines(t, dataset);

async function overview(api: Client, extra: object = {}): Promise<any> {
  const res = await api.post('/api/projects/@current/query/', { query: { kind: 'WebOverviewQuery', dateRange: RANGE, properties: [], ...extra }, refresh: 'force_blocking' });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body;
}

const essence = (body: any) => body.results.map((i: any) => [i.key, i.value, i.previous, i.changeFromPreviousPct]);

for (const zone of ['UTC', 'America/New_York']) {
  t.test(`the same overview on both engines (${zone})`, async (t) => {
    for (const api of [engines.chApi, engines.localApi]) t.equal((await api.patch('/api/projects/@current/', { timezone: zone })).status, 200);
    for (const extra of [{}, { compareFilter: { compare: true } }, { properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }], compareFilter: { compare: true } }]) {
      const [ch, local] = [await overview(engines.chApi, extra), await overview(engines.localApi, extra)];
      t.match(ch, { clickhouse: { fallback: null } }, 'answered by ClickHouse');
      t.same(essence(ch), essence(local), JSON.stringify(extra));
      t.ok(local.results[2].value > 0, 'sessions to count');
    }
  });
}

t.test('tables by a session property: the same on both engines', async (t) => {
  for (const breakdownBy of ['InitialPage', 'ExitPage', 'InitialChannelType', 'InitialReferringDomain', 'InitialUTMSource', 'InitialUTMCampaign', 'Browser', 'Page']) {
    const query = { kind: 'WebStatsTableQuery', breakdownBy, includeBounceRate: breakdownBy === 'InitialPage' || breakdownBy === 'Browser', dateRange: RANGE, properties: [], compareFilter: { compare: true } };
    const [ch, local] = await Promise.all([engines.chApi, engines.localApi].map((api) => api.post('/api/projects/@current/query/', { query, refresh: 'force_blocking' })));
    t.match(ch!.body, { clickhouse: { fallback: null } }, `${breakdownBy}: answered by ClickHouse`);
    t.same(ch!.body.results, local!.body.results, breakdownBy);
    t.ok(local!.body.results.length > 0, `${breakdownBy}: rows`);
  }
});

t.test('outbound clicks: the same on both engines', async (t) => {
  for (const stripQueryParams of [true, false]) {
    const query = { kind: 'WebExternalClicksTableQuery', stripQueryParams, dateRange: RANGE, properties: [] };
    const [ch, local] = await Promise.all([engines.chApi, engines.localApi].map((api) => api.post('/api/projects/@current/query/', { query, refresh: 'force_blocking' })));
    t.match(ch!.body, { clickhouse: { fallback: null } });
    t.same(ch!.body.results, local!.body.results, `stripQueryParams: ${stripQueryParams}`);
    t.ok(local!.body.results.length > 0, 'clicks to count');
  }
});

t.test('goals and conversion goals: the same on both engines', async (t) => {
  for (const api of [engines.chApi, engines.localApi]) {
    t.equal((await api.post('/api/projects/@current/actions/', { name: 'Saw b', steps: [{ event: '$pageview', url: '/b', url_matching: 'contains' }] })).status, 201);
  }
  const query = { kind: 'WebGoalsQuery', dateRange: RANGE, properties: [], compareFilter: { compare: true } };
  const [ch, local] = await Promise.all([engines.chApi, engines.localApi].map((api) => api.post('/api/projects/@current/query/', { query, refresh: 'force_blocking' })));
  t.match(ch!.body, { clickhouse: { fallback: null } });
  t.same(ch!.body.results, local!.body.results);
  t.ok(local!.body.results[0][2][0] > 0, 'conversions to count');
  const goal = { conversionGoal: { customEventName: '$autocapture' }, compareFilter: { compare: true } };
  const [chGoal, localGoal] = [await overview(engines.chApi, goal), await overview(engines.localApi, goal)];
  t.match(chGoal, { clickhouse: { fallback: null } });
  t.same(essence(chGoal), essence(localGoal), 'the overview with a conversion goal');
});

t.test('what ClickHouse does not compute yet falls back and says so', async (t) => {
  const query = { kind: 'WebStatsTableQuery', breakdownBy: 'Region', dateRange: RANGE, properties: [] };
  const table = await engines.chApi.post('/api/projects/@current/query/', { query });
  t.match(table.body, { clickhouse: { fallback: 'the Region breakdown is not computed on ClickHouse yet' } });
  const local = await engines.localApi.post('/api/projects/@current/query/', { query });
  t.same(table.body.results, local.body.results);
  const filtered = await overview(engines.chApi, { properties: [{ key: '$channel_type', value: 'Direct', operator: 'exact', type: 'session' }] });
  t.match(filtered, { clickhouse: { fallback: 'session property filters are not computed on ClickHouse yet' } });
});
