// No request can end the process: a JSON body nested ~2,000 levels deep made msgpackr
// overflow the stack while the front packed the tick's batch for a worker, an exception outside every request's
// try/catch, and the process exited. Every JSON body and JSON query parameter is now bounded in depth
// (src/domain/json-depth.ts): deeper is a 400 with the error body, and requests beside it are served.
import t from 'tap';
import { MAX_JSON_DEPTH } from '../../src/domain/json-depth.js';
import { ROUTES } from '../../src/front/routes.js';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);

const nestedText = (levels: number, leaf = '1') => '['.repeat(levels) + leaf + ']'.repeat(levels);
const DEEP = nestedText(2_000);
const TOO_DEEP = { type: 'invalid_request', code: 'parse_error', detail: `JSON parse error - nested deeper than ${MAX_JSON_DEPTH} levels`, attr: null };

const pathOf = (pattern: string) =>
  pattern.replace(':project_id', '@current').replace(':organization_id', '@current').replace(/:[a-z_]+/g, '1');

async function healthy(): Promise<boolean> {
  return (await fetch(`${server.q.base}/_health`).catch(() => null))?.status === 200;
}

t.test('every route with a JSON body refuses a body nested 2,000 levels with a 400, and the server lives', async (t) => {
  const jsonRoutes = ROUTES.filter((r) => r.body === 'json');
  t.ok(jsonRoutes.length >= 20, `${jsonRoutes.length} routes take JSON bodies`);
  for (const route of jsonRoutes) {
    const body = `{"key":"d","name":"n","properties":{},"filters":{"groups":[{"properties":[],"x":${DEEP}}]}}`;
    const res = await server.api.request(route.method, pathOf(route.path), body, { 'content-type': 'application/json' });
    t.same({ status: res.status, body: res.body }, { status: 400, body: TOO_DEEP }, `${route.method} ${route.path}`);
    if (!(await healthy())) {
      t.fail(`the server stopped answering after ${route.method} ${route.path}`);
      return;
    }
  }
});

t.test('requests sent in the same tick as a deep one are served', async (t) => {
  const valid = Array.from({ length: 10 }, (_, i) => server.api.post('/api/projects/@current/feature_flags/', { key: `beside-${i}` }));
  const deep = server.api.request('POST', '/api/projects/@current/feature_flags/', `{"key":"deep","filters":${DEEP}}`, { 'content-type': 'application/json' });
  const [deepRes, ...validRes] = await Promise.all([deep, ...valid]);
  t.equal(deepRes.status, 400);
  t.same(validRes.map((r) => r.status), Array(10).fill(201));
});

t.test(`a body exactly ${MAX_JSON_DEPTH} levels deep is not refused for its depth`, async (t) => {
  // {"properties": {"n": [[...]]}}: the body is level 1, properties 2, the list the remaining levels.
  const atBound = `{"properties":{"n":${nestedText(MAX_JSON_DEPTH - 2)}}}`;
  const res = await server.api.request('POST', '/api/projects/@current/persons/', atBound, { 'content-type': 'application/json' });
  t.equal(res.status, 201, res.text);
  const over = `{"properties":{"n":${nestedText(MAX_JSON_DEPTH - 1)}}}`;
  t.same((await server.api.request('POST', '/api/projects/@current/persons/', over, { 'content-type': 'application/json' })).body, TOO_DEEP);
});

t.test('deep JSON in flag evaluation bodies and in JSON query parameters is a 400', async (t) => {
  const flags = await new Client(server.q.base, null).request('POST', '/flags/?v=2', `{"token":"${PROJECT_KEY}","distinct_id":"d","person_properties":{"x":${DEEP}}}`);
  t.same({ status: flags.status, body: flags.body }, { status: 400, body: TOO_DEEP }, '/flags/');
  const decide = await new Client(server.q.base, null).request('POST', '/decide/?v=3', `{"token":"${PROJECT_KEY}","distinct_id":"d","groups":${DEEP}}`);
  t.equal(decide.status, 400, '/decide/');
  const property = encodeURIComponent(`[{"type":"AND","values":${nestedText(1_000, '{"key":"a","value":"b"}')}}]`);
  for (const path of ['/api/projects/@current/events/', '/api/projects/@current/persons/']) {
    const res = await server.api.get(`${path}?properties=${property}`);
    t.match({ status: res.status, body: res.body }, { status: 400, body: { type: 'validation_error', attr: 'properties' } }, path);
  }
  const groups = await server.api.get(`/api/projects/@current/feature_flags/evaluation_reasons/?distinct_id=d&groups=${encodeURIComponent(DEEP)}`);
  t.equal(groups.status, 400, 'evaluation_reasons groups');
  t.ok(await healthy());
});
