// The person properties timeline over HTTP: points where the crucial properties changed, as they were at each event
// (kept when events are applied), with their relevant event counts.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const T = (h: number) => new Date(Date.UTC(2026, 10, 10, h)).toISOString();

t.test('points where the crucial properties change', async (t) => {
  const created = await server.api.post('/api/projects/', { name: 'timeline' });
  const P = `/api/projects/${created.body.id}`;
  const batch = [
    { event: 'view', distinct_id: 'ann', timestamp: T(8), properties: { $set: { plan: 'free', city: 'Oslo' } } },
    { event: 'view', distinct_id: 'ann', timestamp: T(9) },
    { event: 'upgrade', distinct_id: 'ann', timestamp: T(10), properties: { $set: { plan: 'pro' } } },
    { event: 'view', distinct_id: 'ann', timestamp: T(11), properties: { $set: { city: 'Bergen' } } },
    { event: 'view', distinct_id: 'ann', timestamp: T(12) },
    { event: 'view', distinct_id: 'bob', timestamp: T(9), properties: { $set: { plan: 'pro' } } },
  ];
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  t.equal(res.status, 200);
  const ann = (await server.api.get(`${P}/persons/?distinct_id=ann`)).body.results[0];
  const q = (params: string) => server.api.get(`${P}/persons/${ann.uuid}/properties_timeline/?date_from=2026-11-10&date_to=2026-11-10&${params}`);
  const byPlan = await q(`properties=${encodeURIComponent('[{"key":"plan","value":"pro","type":"person"}]')}`);
  t.equal(byPlan.status, 200);
  t.same(byPlan.body.crucial_property_keys, ['plan']);
  t.same(byPlan.body.points.map((p: any) => [p.timestamp, p.properties.plan, p.relevant_event_count]), [[T(8), 'free', 2], [T(10), 'pro', 3]]);
  t.match(byPlan.body.points[1].properties, { plan: 'pro', city: 'Oslo' }, 'the whole person as it was then');
  t.match(byPlan.body, { effective_date_from: '2026-11-10T00:00:00+00:00', effective_date_to: '2026-11-10T23:59:59+00:00' });
  const both = await q(`properties=${encodeURIComponent('[{"key":"plan","value":"pro","type":"person"}]')}&breakdown=city&breakdown_type=person`);
  t.same(both.body.points.map((p: any) => p.relevant_event_count), [2, 1, 2], 'a point when either crucial property changes');
  const views = await q(`events=${encodeURIComponent('[{"id":"view"}]')}`);
  t.same(views.body.points.map((p: any) => p.relevant_event_count), [4], 'no crucial keys: one point; only the relevant events counted');
  t.equal((await server.api.get(`${P}/persons/not-a-person/properties_timeline/`)).status, 400);
});
