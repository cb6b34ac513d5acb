// Deeply nested requests over HTTP: HogQL (parentheses, `+` chains, nested calls, arrays), trends formulas and
// property filter trees answer 400 with the error body past their bounds, never 500; the server keeps answering
// (`/_health`) after each; queries just inside the bounds still answer 200 with the right values, also when the
// query is scanned by both workers (the plan is cloned to the other worker).
import t from 'tap';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2 });
const DAY = Date.UTC(2026, 10, 10, 12);
const EVENTS = 10;
const LIMIT = 256;

const repeat = (s: string, n: number) => s.repeat(n);
const chain = (term: string, op: string, n: number) => Array(n).fill(term).join(op);

t.before(async () => {
  const batch = Array.from({ length: EVENTS }, (_, i) => ({
    event: '$pageview', distinct_id: `user-${i}`, timestamp: new Date(DAY + i * 60_000).toISOString(), properties: { n: 1, $browser: i % 2 ? 'Chrome' : 'Safari' },
  }));
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch }) });
  if (res.status !== 200) throw new Error(`batch: ${res.status}`);
});

const hogql = (sql: string) =>
  server.api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query: sql }, refresh: 'force_blocking' });

async function healthy(t: Tap, what: string): Promise<void> {
  const res = await server.api.get('/_health');
  t.equal(res.status, 200, `/_health after ${what}`);
}
type Tap = { equal(a: unknown, b: unknown, m?: string): void };

t.test('HogQL nested past the bound: 400 validation_error at 10,000 and 100,000 levels, and the server stays up', async (t) => {
  const cases: [string, string][] = [
    ['10,000 parentheses', `SELECT ${repeat('(', 10_000)}1${repeat(')', 10_000)}`],
    ['100,000 parentheses', `SELECT ${repeat('(', 100_000)}1${repeat(')', 100_000)}`],
    ['10,000 + terms', `SELECT ${chain('1', '+', 10_000)}`],
    ['100,000 + terms', `SELECT ${chain('1', '+', 100_000)}`],
    ['10,000 nested plus()', `SELECT ${repeat('plus(1, ', 10_000)}1${repeat(')', 10_000)}`],
    ['10,000 nested arrays', `SELECT ${repeat('[', 10_000)}1${repeat(']', 10_000)}`],
    ['100,000 nested arrays', `SELECT ${repeat('[', 100_000)}1${repeat(']', 100_000)}`],
    ['10,000 NOT', `SELECT ${repeat('NOT ', 10_000)}1`],
    ['a chain over a column, scanned', `SELECT count() FROM events WHERE ${chain('toInt(properties.n)', ' + ', 10_000)} > 0`],
    ['300 nested subqueries', `SELECT ${repeat('(SELECT ', 300)}1${repeat(')', 300)}`],
    ['just past the bound', `SELECT ${chain('1', '+', LIMIT)}`],
  ];
  for (const [what, sql] of cases) {
    const started = performance.now();
    const res = await hogql(sql);
    const ms = performance.now() - started;
    t.equal(res.status, 400, what);
    t.match(res.body, { type: 'validation_error', code: 'query_error', detail: `The query is nested too deeply (more than ${LIMIT} levels).`, attr: null }, what);
    // Refused at the bound's depth: tens of milliseconds here. What is asserted is the answer and the server's health;
    // the time only fails an unbounded parse (bound: 15 s), not a loaded machine.
    t.ok(ms < 15_000, `${what}: answered in ${ms.toFixed(0)} ms (bound: 15 s)`);
    await healthy(t, what);
  }
});

t.test('HogQL just inside the bound answers 200 with the right values', async (t) => {
  const parens = await hogql(`SELECT ${repeat('(', 250)}7${repeat(')', 250)}`);
  t.equal(parens.status, 200, parens.text.slice(0, 200));
  t.same(parens.body.results, [[7]]);

  // SELECT (one level) over 254 plus() calls over the leaves: 256 levels.
  const sum = await hogql(`SELECT ${chain('1', '+', LIMIT - 1)}`);
  t.equal(sum.status, 200, sum.text.slice(0, 200));
  t.same(sum.body.results, [[LIMIT - 1]]);

  const calls = await hogql(`SELECT ${repeat('plus(1, ', 200)}1${repeat(')', 200)}`);
  t.equal(calls.status, 200, calls.text.slice(0, 200));
  t.same(calls.body.results, [[201]]);

  const arrays = await hogql(`SELECT ${repeat('[', 200)}1${repeat(']', 200)}`);
  t.equal(arrays.status, 200, arrays.text.slice(0, 200));
  let v: unknown = arrays.body.results[0][0];
  let depth = 0;
  while (Array.isArray(v) && v.length === 1) {
    v = v[0];
    depth++;
  }
  t.same([depth, v], [200, 1], 'the array nests 200 levels around 1');

  // A deep expression in a query both workers scan: the plan reaches the other worker intact.
  const scanned = await hogql(`SELECT count(), sum(${chain('toInt(properties.n)', ' + ', 200)}) FROM events WHERE ${chain('toInt(properties.n)', ' * ', 200)} = 1`);
  t.equal(scanned.status, 200, scanned.text.slice(0, 200));
  t.same(scanned.body.results, [[EVENTS, EVENTS * 200]]);
  await healthy(t, 'the queries inside the bound');
});

// As a POST body: these filters are hundreds of kilobytes, and uWebSockets.js drops a request whose head (the
// URL with its query) passes 4 KB unless it arrives in one read (src/front/README.md, Limits).
const trend = (params: Record<string, unknown>) =>
  server.api.post('/api/projects/@current/insights/trend/', { date_from: '2026-11-09', date_to: '2026-11-11', refresh: true, ...params });
const TWO = [{ id: '$pageview' }, { id: '$pageview' }];

t.test('trends formulas: deep parentheses and long chains answer 400 on formula, shallow ones compute', async (t) => {
  for (const [what, formula] of [
    ['10,000 parentheses', `${repeat('(', 10_000)}A${repeat(')', 10_000)}`],
    ['100,000 + terms', chain('A', '+', 100_000)],
    ['10,000 ^', chain('A', '^', 10_000)],
  ] as const) {
    const res = await trend({ events: TWO, formula });
    t.equal(res.status, 400, what);
    t.match(res.body, { type: 'validation_error', code: 'invalid_input', detail: /The formula is nested too deeply/, attr: 'formula' }, what);
    await healthy(t, `formula ${what}`);
  }
  const posted = await server.api.post('/api/projects/@current/insights/trend/', { events: TWO, formula: `${repeat('(', 100_000)}A${repeat(')', 100_000)}` });
  t.equal(posted.status, 400);
  t.equal(posted.body.attr, 'formula');
  const query = await server.api.post('/api/projects/@current/query/', {
    query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: '$pageview' }], trendsFilter: { formula: chain('A', '+', 100_000) } },
  });
  t.equal(query.status, 400, query.text.slice(0, 200));
  t.equal(query.body.type, 'validation_error');
  await healthy(t, 'the formulas');

  const ok = await trend({ events: TWO, formula: `${repeat('(', 200)}A + B${repeat(')', 200)} / 2` });
  t.equal(ok.status, 200, ok.text.slice(0, 200));
  t.same(ok.body.result[0].data, [0, EVENTS, 0]);
});

/** `n` groups, each the only value of the one around it, around one filter. */
function nestedGroups(n: number, leaf: Record<string, unknown>): Record<string, unknown> {
  let g: Record<string, unknown> = leaf;
  for (let i = 0; i < n; i++) g = { type: 'AND', values: [g] };
  return g;
}

t.test('property filter trees nested as deep as JSON allows answer 400, never 500', async (t) => {
  const leaf = { key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' };
  // Each group is two JSON levels (the object and its values); 63 of them around the filter are 127 levels.
  const deepest = await trend({ events: [{ id: '$pageview' }], properties: nestedGroups(63, leaf) });
  t.equal(deepest.status, 400);
  t.match(deepest.body, { type: 'validation_error', code: 'invalid_input', detail: String, attr: 'properties' });
  await healthy(t, '63 nested groups');

  // As JSON text in a string field, as a query parameter would carry it (the body itself stays shallow).
  const pastJson = await trend({ events: [{ id: '$pageview' }], properties: JSON.stringify(nestedGroups(2_000, leaf)) });
  t.equal(pastJson.status, 400);
  t.match(pastJson.body, { type: 'validation_error', detail: /nests deeper than 128 levels/, attr: 'properties' });
  await healthy(t, '2,000 nested groups');

  // A filter value is no group, but its text is taken recursively: bounded as JSON too, in a parameter or a string.
  const deepValue = `[{"key":"$browser","operator":"exact","type":"event","value":${repeat('[', 50_000)}1${repeat(']', 50_000)}}]`;
  const inParam = await trend({ events: [{ id: '$pageview' }], properties: deepValue });
  t.equal(inParam.status, 400);
  t.equal(inParam.body.attr, 'properties');
  const inString = await server.api.post('/api/projects/@current/insights/trend/', { events: [{ id: '$pageview' }], properties: deepValue });
  t.equal(inString.status, 400);
  t.equal(inString.body.attr, 'properties');
  await healthy(t, 'deep filter values');

  const shallow = await trend({ events: [{ id: '$pageview' }], properties: nestedGroups(10, leaf) });
  t.equal(shallow.status, 200, shallow.text.slice(0, 200));
  t.same(shallow.body.result[0].data, [0, EVENTS / 2, 0], 'the Chrome pageviews');
});
