// Funnel correlation over HTTP on a hand-built population: which events go with converting (odds ratios with their
// prior, the significance threshold, skew), person-property correlation, and the persons behind an entry.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const enc = encodeURIComponent;
const T = (day: number, h: number) => new Date(Date.UTC(2026, 10, day, h)).toISOString();
const STEPS = [{ id: 'view', order: 0 }, { id: 'buy', order: 1 }];
let P = '';

t.before(async () => {
  const created = await server.api.post('/api/projects/', { name: 'correlation' });
  P = `/api/projects/${created.body.id}`;
  const batch: object[] = [];
  // 40 persons: 20 convert. Converters watch the demo (18 of 20, inside the attempt); 15 of the others read the
  // docs; everyone opens the menu; one converter watches the demo only after buying (outside the window).
  for (let i = 0; i < 40; i++) {
    const id = `p${i}`;
    const converts = i < 20;
    batch.push({ event: 'view', distinct_id: id, timestamp: T(10, 8), properties: { $set: { plan: converts ? 'pro' : 'free' } } });
    batch.push({ event: 'menu', distinct_id: id, timestamp: T(10, 9) });
    if (converts && i < 18) batch.push({ event: 'demo', distinct_id: id, timestamp: T(10, 10) });
    if (!converts && i < 35) batch.push({ event: 'docs', distinct_id: id, timestamp: T(10, 10) });
    if (converts) batch.push({ event: 'buy', distinct_id: id, timestamp: T(10, 11) });
    if (i === 19) batch.push({ event: 'demo', distinct_id: id, timestamp: T(10, 12) });
  }
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
});

async function correlation(extra: Record<string, unknown> = {}) {
  const params = { events: STEPS, date_from: '2026-11-01', date_to: '2026-11-30', ...extra };
  const qs = Object.entries(params).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  return server.api.get(`${P}/insights/funnel/correlation/?${qs}`);
}

t.test('events that go with converting and with dropping', async (t) => {
  const res = await correlation();
  t.equal(res.status, 200);
  const byName = Object.fromEntries(res.body.result.events.map((e: any) => [e.event.event, e]));
  t.match(byName.demo, { success_count: 18, failure_count: 0, correlation_type: 'success', odds_ratio: ((18 + 1) * (20 - 0 + 1)) / ((20 - 18 + 1) * (0 + 1)) }, 'the demo after buying is outside the attempt');
  t.match(byName.docs, { success_count: 0, failure_count: 15, correlation_type: 'failure', odds_ratio: ((0 + 1) * (20 - 15 + 1)) / ((20 - 0 + 1) * (15 + 1)) });
  t.match(byName.menu, { success_count: 20, failure_count: 20, odds_ratio: 1, correlation_type: 'failure' });
  t.notOk('view' in byName || 'buy' in byName, 'funnel steps are not candidates');
  t.same(res.body.result.events.map((e: any) => e.event.event), ['demo', 'docs', 'menu'], 'successes by odds (highest first), then failures (lowest first)');
  t.equal(res.body.result.skewed, false);
  t.match(byName.demo.success_people_url, /persons\/funnel\/correlation\/.*funnel_correlation_person_converted=true/);
  const excluded = await correlation({ funnel_correlation_exclude_event_names: ['menu'] });
  t.same(excluded.body.result.events.map((e: any) => e.event.event), ['demo', 'docs']);
});

t.test('person property correlation', async (t) => {
  const res = await correlation({ funnel_correlation_type: 'properties', funnel_correlation_names: ['plan'] });
  t.same(res.body.result.events.map((e: any) => [e.event.event, e.success_count, e.failure_count]), [['plan::pro', 20, 0], ['plan::free', 0, 20]]);
  const missing = await correlation({ funnel_correlation_type: 'properties' });
  t.same([missing.status, missing.body.attr], [400, 'funnel_correlation_names']);
});

t.test('the persons behind an entry', async (t) => {
  const res = await server.api.post(`${P}/persons/funnel/correlation/`, {
    events: STEPS, date_from: '2026-11-01', date_to: '2026-11-30', funnel_correlation_person_entity: { id: 'docs', type: 'events' }, funnel_correlation_person_converted: false, funnel_correlation_person_limit: 10,
  });
  t.equal(res.status, 200);
  t.equal(res.body.results[0].count, 10);
  t.match(res.body.next, /funnel_correlation_person_offset=10/);
  const all = await server.api.post(`${P}/persons/funnel/correlation/`, { events: STEPS, date_from: '2026-11-01', date_to: '2026-11-30', funnel_correlation_person_entity: { id: 'demo', type: 'events' } });
  t.equal(all.body.results[0].count, 18);
  const pro = await server.api.post(`${P}/persons/funnel/correlation/`, { events: STEPS, date_from: '2026-11-01', date_to: '2026-11-30', funnel_correlation_property_values: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }] });
  t.equal(pro.body.results[0].count, 20);
});

t.test('skewed and refused correlations', async (t) => {
  const skewed = await correlation({ date_from: '2026-11-11' });
  t.same(skewed.body.result, { events: [], skewed: true }, 'nobody in the funnel: no totals');
  t.same([(await correlation({ funnel_correlation_type: 'event_with_properties' })).status], [400]);
  t.same([(await correlation({ events: [{ id: 'view' }] })).status], [400], 'one step is not a funnel');
});
