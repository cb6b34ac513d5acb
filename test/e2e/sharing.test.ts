// Share links over HTTP (PostHog's `sharing` endpoints): a dashboard, a saved insight and the web analytics page
// shared read-only by an unguessable token, answering what the private API answers; disabled, rotated, deleted and
// password-protected links; isolation (the token opens its one object: no private route, no other object or
// project, no query a shared web analytics page does not ask); answers cached against a busy link; scopes.
import t from 'tap';
import { Client, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2 });
let P = '';
let projectToken = '';
let anonymous: Client;

const DAY = 86_400_000;
const today = Date.now();
const trendsQuery = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }], dateRange: { date_from: '-7d' } } };

t.before(async () => {
  const created = await server.api.post('/api/projects/', { name: 'sharing' });
  P = `/api/projects/${created.body.id}`;
  projectToken = created.body.api_token;
  anonymous = server.api.withKey(null);
  const batch: object[] = [];
  for (let d = 0; d < 5; d++) {
    for (const who of ['ann', 'bob', 'cid'].slice(0, 1 + (d % 3))) {
      const session = `s-${who}-${d}`;
      const at = today - d * DAY - 3_600_000;
      batch.push({ event: '$pageview', distinct_id: who, timestamp: new Date(at).toISOString(), properties: { $session_id: session, $pathname: '/pricing', $current_url: 'https://shop.example/pricing', $referring_domain: 'www.google.com' } });
      batch.push({ event: '$pageview', distinct_id: who, timestamp: new Date(at + 30_000).toISOString(), properties: { $session_id: session, $pathname: '/docs', $current_url: 'https://shop.example/docs' } });
      batch.push({ event: 'signup', distinct_id: who, timestamp: new Date(at + 60_000).toISOString(), properties: { email: `${who}@secret.example` } });
    }
  }
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: projectToken, batch }) });
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
});

async function dashboardWithTile(name: string, query: object = trendsQuery): Promise<{ dashboard: number; insight: number }> {
  const dash = await server.api.post(`${P}/dashboards/`, { name });
  const insight = await server.api.post(`${P}/insights/`, { name: `${name} views`, query, dashboards: [dash.body.id] });
  if (dash.status !== 201 || insight.status !== 201) throw new Error(`set-up ${dash.status} ${insight.status}`);
  return { dashboard: dash.body.id, insight: insight.body.id };
}

t.test('a shared dashboard: enabled by PATCH, opened by its token alone, answering as the private API', async (t) => {
  const { dashboard, insight } = await dashboardWithTile('Growth');
  const S = `${P}/dashboards/${dashboard}/sharing/`;
  t.match((await server.api.get(S)).body, { enabled: false, access_token: null, password_required: false, share_passwords: [] }, 'not shared yet');
  const on = await server.api.patch(S, { enabled: true });
  t.equal(on.status, 200, on.text);
  t.match(on.body, { enabled: true, access_token: /^[A-Za-z0-9_-]{29,30}$/, created_at: String, password_required: false });
  const token = on.body.access_token as string;

  const shared = await anonymous.get(`/api/shared/${token}`);
  t.equal(shared.status, 200, shared.text);
  t.match(shared.body, { type: 'dashboard', project: { name: 'sharing', timezone: 'UTC' }, dashboard: { name: 'Growth' } });
  const privateView = await server.api.get(`${P}/dashboards/${dashboard}/?refresh=true`);
  t.equal(shared.body.dashboard.tiles.length, 1);
  t.same(shared.body.dashboard.tiles[0].insight.result.map((s: any) => s.data), privateView.body.tiles[0].insight.result.map((s: any) => s.data), 'the same numbers as the private API');
  t.equal(shared.body.dashboard.tiles[0].insight.result[0].count, 2 * (1 + 2 + 3 + 1 + 2), 'every pageview of the five days');
  for (const secret of ['admin@quill.local', projectToken, 'phx_', 'created_by']) {
    t.notOk(shared.text.includes(secret), `the shared answer carries no ${secret}`);
  }
  t.notOk('id' in shared.body.dashboard.tiles[0].insight || 'dashboards' in shared.body.dashboard.tiles[0].insight, `nor the insight's id (${insight}) or its other dashboards`);

  const page = await fetch(`${server.q.base}/shared/${token}`, { redirect: 'manual' });
  t.equal(page.status, 302, 'PostHog\'s address of the link');
  t.equal(page.headers.get('location'), `/console/shared/${token}`);
  const html = await fetch(`${server.q.base}/console/shared/${token}`);
  t.equal(html.status, 200);
  t.match(html.headers.get('content-type') ?? '', /text\/html/);

  t.match((await server.api.get(S)).body, { enabled: true, access_token: token }, 'the configuration reads back');
  t.equal((await server.api.patch(S, { enabled: false })).status, 200);
  t.equal((await anonymous.get(`/api/shared/${token}`)).status, 404, 'a disabled link opens nothing');
  t.equal((await server.api.patch(S, { enabled: true })).body.access_token, token, 'enabled again, the same link');
  t.equal((await anonymous.get(`/api/shared/${token}`)).status, 200);

  const rotated = await server.api.post(`${S}refresh/`, {});
  t.equal(rotated.status, 200, rotated.text);
  t.not(rotated.body.access_token, token, 'refresh makes a new token');
  t.match((await anonymous.get(`/api/shared/${token}`)).body, { type: 'invalid_request', code: 'not_found' }, 'the old link opens nothing');
  t.equal((await anonymous.get(`/api/shared/${rotated.body.access_token}`)).status, 200, 'the new one does');

  t.equal((await server.api.patch(`${P}/dashboards/${dashboard}/`, { deleted: true })).status, 200);
  t.equal((await anonymous.get(`/api/shared/${rotated.body.access_token}`)).status, 404, 'a deleted dashboard\'s link opens nothing');
  t.equal((await server.api.get(S)).status, 404);
});

t.test('isolation: a token opens its one object and nothing else', async (t) => {
  const { dashboard, insight } = await dashboardWithTile('Isolated');
  const token = (await server.api.patch(`${P}/dashboards/${dashboard}/sharing/`, { enabled: true })).body.access_token as string;
  const asBearer = server.api.withKey(token);
  for (const path of [`${P}/dashboards/${dashboard}/`, `${P}/insights/${insight}/`, `${P}/events/`, '/api/projects/', `${P}/dashboards/${dashboard}/sharing/`]) {
    t.equal((await asBearer.get(path)).status, 401, `no private route takes the token (${path})`);
  }
  t.equal((await anonymous.get(`${P}/dashboards/${dashboard}/?sharing_access_token=${token}`)).status, 401, 'nor as a query parameter');
  const query = await anonymous.post(`/api/shared/${token}/query/`, { query: { kind: 'WebOverviewQuery', dateRange: { date_from: '-7d' } } });
  t.equal(query.status, 404, 'a dashboard link runs no query');
  t.equal((await anonymous.get(`/api/shared/${token.slice(0, -1)}x`)).status, 404, 'a near token opens nothing');
  t.equal((await anonymous.get('/api/shared/short')).status, 404);

  // Another project's link opens that project's object only, and this project's link never shows its objects.
  const other = await server.api.post('/api/projects/', { name: 'elsewhere' });
  const theirDash = await server.api.post(`/api/projects/${other.body.id}/dashboards/`, { name: 'Theirs' });
  const theirToken = (await server.api.patch(`/api/projects/${other.body.id}/dashboards/${theirDash.body.id}/sharing/`, { enabled: true })).body.access_token;
  t.match((await anonymous.get(`/api/shared/${theirToken}`)).body, { project: { name: 'elsewhere' }, dashboard: { name: 'Theirs', tiles: [] } });
  t.match((await anonymous.get(`/api/shared/${token}`)).body, { project: { name: 'sharing' }, dashboard: { name: 'Isolated' } });
  t.equal((await server.api.get(`/api/projects/${other.body.id}/dashboards/${dashboard}/sharing/`)).status, 404, 'a dashboard is shared from its own project only');

  // An insight's link shows the insight, not the dashboards it is on.
  const insightLink = await server.api.patch(`${P}/insights/${insight}/sharing/`, { enabled: true });
  t.equal(insightLink.status, 200, insightLink.text);
  const seen = await anonymous.get(`/api/shared/${insightLink.body.access_token}`);
  t.match(seen.body, { type: 'insight', insight: { name: 'Isolated views', result: [{ count: Number }] } });
  t.notOk('dashboard' in seen.body || 'dashboards' in seen.body.insight, 'no dashboards through an insight link');
});

t.test('a password-protected link: unlocked by a password, locked again when it goes', async (t) => {
  const { dashboard } = await dashboardWithTile('Private');
  const S = `${P}/dashboards/${dashboard}/sharing/`;
  const token = (await server.api.patch(S, { enabled: true })).body.access_token as string;
  t.match((await server.api.post(`${S}passwords/`, { raw_password: 'correct horse' })).body, { type: 'validation_error', attr: 'password_required' }, 'protection first');
  t.match((await server.api.patch(S, { password_required: true })).body, { password_required: true, share_passwords: [] });
  t.match((await anonymous.get(`/api/shared/${token}`)).body, { type: 'authentication_error', code: 'password_required' }, 'locked');
  t.match((await server.api.post(`${S}passwords/`, { raw_password: 'short' })).body, { type: 'validation_error', attr: 'raw_password' });
  const made = await server.api.post(`${S}passwords/`, { raw_password: 'correct horse', note: 'for the board' });
  t.equal(made.status, 201, made.text);
  t.match(made.body, { id: Number, password: 'correct horse', note: 'for the board', created_by_email: 'admin@quill.local' });
  const generated = await server.api.post(`${S}passwords/`, {});
  t.match(generated.body, { password: /^[A-Za-z0-9]{16}$/ }, 'a random one when none is given');
  t.match((await server.api.get(S)).body.share_passwords, [{ id: made.body.id, note: 'for the board', is_active: true }, { id: generated.body.id }]);
  t.notOk((await server.api.get(S)).text.includes('correct horse'), 'a password is shown once, at creation');

  const wrong = await anonymous.post(`/shared/${token}`, { password: 'battery staple' });
  t.match(wrong, { status: 401, body: { type: 'authentication_error', code: 'incorrect_password' } });
  const right = await anonymous.post(`/shared/${token}`, { password: 'correct horse' });
  t.equal(right.status, 200, right.text);
  const shareToken = right.body.shareToken as string;
  t.match(shareToken, /^\d+\.\d+\.[A-Za-z0-9_-]{43}$/);
  const viewer = server.api.withKey(shareToken);
  t.match((await viewer.get(`/api/shared/${token}`)).body, { type: 'dashboard', dashboard: { name: 'Private' } }, 'unlocked');
  const [id, expiry] = shareToken.split('.');
  t.equal((await server.api.withKey(`${id}.${Number(expiry) + 1}.${shareToken.split('.')[2]}`).get(`/api/shared/${token}`)).status, 401, 'a forged expiry does not unlock');
  t.equal((await viewer.get(`${P}/dashboards/${dashboard}/`)).status, 401, 'the unlock token opens no private route');

  const second = await anonymous.post(`/shared/${token}`, { password: generated.body.password });
  t.equal(second.status, 200, 'either password unlocks');
  t.equal((await server.api.delete(`${S}passwords/${made.body.id}/`)).status, 204);
  t.equal((await server.api.delete(`${S}passwords/${made.body.id}/`)).status, 404);
  t.match((await viewer.get(`/api/shared/${token}`)).body, { code: 'password_required' }, 'the deleted password\'s viewers are locked out');
  t.equal((await server.api.withKey(second.body.shareToken).get(`/api/shared/${token}`)).status, 200, 'the other password\'s are not');
  const rotated = (await server.api.post(`${S}refresh/`, {})).body.access_token;
  t.equal((await server.api.withKey(second.body.shareToken).get(`/api/shared/${rotated}`)).status, 401, 'a new link needs a new unlock');
  t.equal((await server.api.patch(S, { password_required: false })).status, 200);
  t.equal((await anonymous.get(`/api/shared/${rotated}`)).status, 200, 'protection off: open again');
});

t.test('unlock attempts are throttled per link and address, as sign-in is', async (t) => {
  const { dashboard } = await dashboardWithTile('Guarded');
  const S = `${P}/dashboards/${dashboard}/sharing/`;
  const token = (await server.api.patch(S, { enabled: true, password_required: true })).body.access_token as string;
  await server.api.post(`${S}passwords/`, { raw_password: 'long enough password' });
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await anonymous.post(`/shared/${token}`, { password: `guess number ${i}` })).status);
  t.equal(statuses[0], 401);
  t.ok(statuses.includes(429), `guessing is slowed down (${statuses.join(', ')})`);
  t.match((await anonymous.post(`/shared/${token}`, { nope: 1 })).body, { type: 'validation_error' }, 'a malformed unlock is a 400');
});

t.test('a shared web analytics page runs the page\'s own queries and nothing else', async (t) => {
  const S = `${P}/web_analytics/sharing/`;
  const token = (await server.api.patch(S, { enabled: true })).body.access_token as string;
  t.match((await anonymous.get(`/api/shared/${token}`)).body, { type: 'web_analytics', project: { name: 'sharing' } });
  const ask = (query: object) => anonymous.post(`/api/shared/${token}/query/`, { query });

  const overview = { kind: 'WebOverviewQuery', dateRange: { date_from: '-7d', date_to: null }, properties: [], compareFilter: { compare: true } };
  const shared = await ask(overview);
  t.equal(shared.status, 200, shared.text);
  const own = await server.api.post(`${P}/query/`, { query: overview });
  t.same(shared.body.results, own.body.results, 'the overview equals the private answer');
  t.match(shared.body.results.find((r: any) => r.key === 'visitors'), { value: 3 });
  const table = { kind: 'WebStatsTableQuery', breakdownBy: 'Page', limit: 10, includeBounceRate: true, dateRange: { date_from: '-7d' }, properties: [{ type: 'session', key: '$channel_type', value: 'Organic Search', operator: 'exact' }] };
  const pages = await ask(table);
  t.equal(pages.status, 200, pages.text);
  t.same(pages.body.results, (await server.api.post(`${P}/query/`, { query: table })).body.results, 'a filtered table too');
  const chart = { kind: 'TrendsQuery', dateRange: { date_from: '-7d' }, interval: 'day', properties: [], series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau', custom_name: 'Visitors' }, { kind: 'EventsNode', event: '$pageview', math: 'total', custom_name: 'Views' }] };
  t.equal((await ask(chart)).status, 200, 'the visitors chart');

  const refused: [string, object][] = [
    ['HogQL', { kind: 'HogQLQuery', query: 'select properties.email from events' }],
    ['another event', { ...chart, series: [{ kind: 'EventsNode', event: 'signup', math: 'total' }] }],
    ['a property of the events', { ...chart, series: [{ kind: 'EventsNode', event: '$pageview', math: 'sum', math_property: 'revenue' }] }],
    ['a filter the page does not offer', { ...overview, properties: [{ type: 'person', key: 'email', value: 'ann@secret.example', operator: 'exact' }] }],
    ['a filter operator the page does not use', { ...overview, properties: [{ type: 'event', key: '$pathname', value: '/p', operator: 'icontains' }] }],
    ['a conversion goal', { ...overview, conversionGoal: { customEventName: 'signup' } }],
    ['a range the page does not offer', { ...overview, dateRange: { date_from: '-3650d' } }],
    ['a breakdown of trends', { ...chart, breakdownFilter: { breakdown: 'email' } }],
    ['a funnel', { kind: 'FunnelsQuery', series: [] }],
  ];
  for (const [what, query] of refused) {
    const res = await ask(query);
    t.match(res, { status: 400, body: { type: 'validation_error', attr: 'query' } }, `refused: ${what}`);
    t.notOk(res.text.includes('secret.example'));
  }
  t.match(await anonymous.post(`/api/shared/${token}/query/`, 'not json'), { status: 400, body: { code: 'parse_error' } });

  t.equal((await server.api.patch(S, { enabled: false })).status, 200);
  t.equal((await ask(overview)).status, 404, 'disabled');
});

t.test('a busy link is answered from its cache: one computation per answer per worker', async (t) => {
  // A question no earlier link asked (answers are cached per project and query, whichever link asked).
  const { dashboard } = await dashboardWithTile('Busy', { ...trendsQuery, source: { ...trendsQuery.source, dateRange: { date_from: '-5d' } } });
  const token = (await server.api.patch(`${P}/dashboards/${dashboard}/sharing/`, { enabled: true })).body.access_token as string;
  const views = await Promise.all(Array.from({ length: 40 }, () => anonymous.get(`/api/shared/${token}`)));
  t.ok(views.every((v) => v.status === 200), 'every view answered');
  const computed = views.filter((v) => v.body.dashboard.tiles[0].insight.is_cached === false).length;
  t.ok(computed >= 1 && computed <= 2, `40 concurrent views computed the tile ${computed} time(s): at most once per worker`);
  const counts = new Set(views.map((v) => v.body.dashboard.tiles[0].insight.result[0].count));
  t.equal(counts.size, 1, 'and every view shows the same answer');

  // New events do not make a shared answer recompute before its period is over (QUILL_SHARE_CACHE_S).
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: projectToken, batch: [{ event: '$pageview', distinct_id: 'late', timestamp: new Date().toISOString() }] }) });
  t.equal(res.status, 200);
  await server.api.get(`${P}/dashboards/${dashboard}/?refresh=true`);
  const later = await Promise.all(Array.from({ length: 6 }, () => anonymous.get(`/api/shared/${token}`)));
  t.ok(later.every((v) => v.body.dashboard.tiles[0].insight.is_cached === true), 'served from the cache');
  t.same(new Set(later.map((v) => v.body.dashboard.tiles[0].insight.result[0].count)), counts);
});

t.test('scopes: sharing_configuration:read reads a link, :write changes it', async (t) => {
  const { dashboard } = await dashboardWithTile('Scoped');
  const key = async (scopes: string[]) => server.api.withKey((await server.api.post('/api/personal_api_keys/', { label: 'sharing', scopes })).body.value);
  const S = `${P}/dashboards/${dashboard}/sharing/`;
  const reader = await key(['sharing_configuration:read']);
  t.equal((await reader.get(S)).status, 200);
  t.equal((await reader.patch(S, { enabled: true })).status, 403);
  t.equal((await (await key(['sharing_configuration:write'])).patch(S, { enabled: true })).status, 200);
  t.equal((await (await key(['dashboard:write'])).get(S)).status, 403, 'dashboard rights are not sharing rights');
  t.match((await server.api.patch(S, { enabled: 'yes' })).body, { type: 'validation_error', attr: 'enabled' });
});
