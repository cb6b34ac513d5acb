// The OpenAPI 3.1 description: GET /api/schema/ serves what src/front/openapi.ts generates from the route
// table; the document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator); it describes every route of the
// table and nothing else; and real answers of a running server — successes and errors — have a status the document
// lists for their operation and a body that validates against the schema it documents there (TypeBox's JSON Schema
// checker on the dereferenced document), so the description cannot drift from the code unnoticed.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Check, Compile } from 'typebox/schema';
import { openApiDocument, openApiPath, OPENAPI_MEDIA_TYPE } from '../../src/front/openapi.js';
import { ROUTES } from '../../src/front/routes.js';
import { Client, PROJECT_KEY, quillForFile, ROOT } from '../helpers/quill.js';

const VERSION: string = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')).version;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const server = quillForFile(t);

type Doc = Record<string, any>;
const generated = openApiDocument(ROUTES, { version: VERSION }) as Doc;

/** The document with every $ref replaced by what it points at (the validator's own resolver edits it in place). */
async function dereferenced(doc: Doc): Promise<Doc> {
  const validator = new Validator();
  const res = await validator.validate(JSON.parse(JSON.stringify(doc)));
  if (!res.valid) throw new Error(`invalid document: ${JSON.stringify(res.errors)}`);
  return validator.resolveRefs() as Doc;
}

t.test('the document is valid OpenAPI 3.1, deterministic, and its $refs all resolve', async (t) => {
  const validator = new Validator();
  const res = await validator.validate(JSON.parse(JSON.stringify(generated)));
  t.same(res.errors, undefined, 'no schema errors');
  t.ok(res.valid, 'valid');
  t.equal(validator.version, '3.1');
  t.equal(JSON.stringify(openApiDocument(ROUTES, { version: VERSION })), JSON.stringify(generated), 'the same table gives the same bytes');
  const text = JSON.stringify(generated);
  const refs = new Set([...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!));
  for (const ref of refs) {
    const target = ref.slice(2).split('/').reduce<any>((node, part) => node?.[part], generated);
    t.ok(target, `${ref} resolves`);
  }
  const deref = validator.resolveRefs() as Doc;
  for (const [name, schema] of Object.entries(deref.components.schemas)) {
    t.doesNotThrow(() => Compile(schema as any), `components.schemas.${name} compiles as JSON Schema`);
  }
  t.ok(text.length < 300_000, `small enough to build at start-up (${text.length} bytes)`);
});

t.test('every route of the table is described, and nothing else', async (t) => {
  const fromTable = ROUTES.map((r) => `${r.method} ${openApiPath(r.path)}`).sort();
  const described: string[] = [];
  for (const [path, item] of Object.entries(generated.paths as Doc)) {
    for (const method of Object.keys(item)) {
      t.ok(METHODS.includes(method), `${path}: ${method} is an operation`);
      described.push(`${method.toUpperCase()} ${path}`);
    }
  }
  t.same(described.sort(), fromTable, 'the same method + path pairs');
  t.equal(new Set(fromTable).size, fromTable.length, 'no route twice');

  const ids = new Set<string>();
  for (const route of ROUTES) {
    const op = generated.paths[openApiPath(route.path)][route.method.toLowerCase()];
    t.ok(op.operationId === route.op || op.operationId.startsWith(`${route.op}_`), `${route.method} ${route.path}: operationId ${op.operationId} names ${route.op}`);
    ids.add(op.operationId);
    const params = (op.parameters ?? []).map((p: Doc) => (p.$ref ? generated.components.parameters[p.$ref.split('/').pop()] : p));
    const inPath = params.filter((p: Doc) => p.in === 'path').map((p: Doc) => p.name).sort();
    t.same(inPath, [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]).sort(), `${route.method} ${route.path}: path parameters`);
    if (route.auth === 'personal') {
      t.same(op.security[0], { PersonalApiKey: route.scope ? [route.scope] : [] }, `${route.method} ${route.path}: the scope ${route.scope}`);
      t.ok(op.security.some((s: Doc) => 'SessionCookie' in s), 'the console session is accepted too');
    }
    if (route.body === 'json' && route.schema) {
      t.ok(op.requestBody.content['application/json'].schema, `${route.method} ${route.path}: the body's schema`);
    }
    for (const status of Object.keys(op.responses)) t.match(status, /^([1-5]\d\d|[1-5]XX)$/);
  }
  t.equal(ids.size, ROUTES.length, 'operationIds are unique');
});

t.test('GET /api/schema/ serves the generated document', async (t) => {
  for (const path of ['/api/schema/', '/api/schema', '/api/schema/?format=json']) {
    const res = await fetch(`${server.q.base}${path}`);
    t.equal(res.status, 200, path);
    t.equal(res.headers.get('content-type'), OPENAPI_MEDIA_TYPE);
    t.same(await res.json(), generated, `${path}: the generated document`);
  }
  const cross = await fetch(`${server.q.base}/api/schema/`, { headers: { origin: 'https://editor.example' } });
  t.equal(cross.headers.get('access-control-allow-origin'), 'https://editor.example', 'readable from other origins (documentation tools)');
  await cross.arrayBuffer();
  const post = await fetch(`${server.q.base}/api/schema/`, { method: 'POST' });
  t.equal(post.status, 405);
  await post.arrayBuffer();
});

interface Sample {
  label: string;
  method: string;
  /** The route pattern, as in the table. */
  route: string;
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  client?: Client;
}

t.test('real answers have a documented status and match the documented schema', async (t) => {
  const api = server.api;
  const served = await api.get('/api/schema/');
  t.equal(served.status, 200);
  const deref = await dereferenced(served.body);
  t.ok(deref.components.schemas.Error.properties?.attr, 'the error body resolves to its schema');
  const P = '/api/projects/:project_id';
  const FF = `${P}/feature_flags`;

  const flag = await api.post('/api/projects/@current/feature_flags/', {
    key: 'documented', filters: { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] }, payloads: { a: '{"x":1}' } },
  });
  t.equal(flag.status, 201);
  const narrow = await api.post('/api/personal_api_keys/', { label: 'cohorts only', scopes: ['cohort:read'] });
  t.equal(narrow.status, 201);
  const throwaway = await api.post('/api/personal_api_keys/', { label: 'to delete', scopes: ['cohort:read'] });

  const identify = { token: PROJECT_KEY, distinct_id: 'documented-user', person_properties: { plan: 'pro' } };
  // One of each management resource, and a stored event, for the samples of their answers.
  const sent = await api.post('/batch/', { api_key: PROJECT_KEY, batch: [{ event: 'signed_up', distinct_id: 'documented-user', properties: { $set: { email: 'd@example.com' } } }] });
  t.equal(sent.status, 200);
  const stored = await api.get('/api/projects/@current/events/?event=signed_up');
  const eventId = stored.body.results[0].id as string;
  const person = await api.get('/api/projects/@current/persons/?distinct_id=documented-user');
  const personId = person.body.results[0].id as number;
  const cohort = await api.post('/api/projects/@current/cohorts/', { name: 'documented', groups: [{ properties: [{ key: 'email', value: 'd@example.com', type: 'person' }] }] });
  const action = await api.post('/api/projects/@current/actions/', { name: 'documented', steps: [{ event: 'signed_up' }] });
  const experiment = await api.post('/api/projects/@current/experiments/', { name: 'documented', feature_flag_key: 'documented-experiment' });
  const insight = await api.post('/api/projects/@current/insights/', { name: 'documented', filters: { insight: 'TRENDS', events: [{ id: 'signed_up' }] } });
  const dashboard = await api.post('/api/projects/@current/dashboards/', { name: 'documented' });
  for (const [name, res] of Object.entries({ cohort, action, experiment, insight, dashboard })) t.equal(res.status, 201, `${name} created`);
  // The experiment created a flag: the definitions' ETag to send back is the one after it.
  const current = await api.get(`/flags/definitions?token=${PROJECT_KEY}`);
  const funnel = encodeURIComponent(JSON.stringify([{ id: 'signed_up', order: 0 }, { id: 'signed_up', order: 1 }]));
  const samples: Sample[] = [
    { label: 'capture', method: 'POST', route: '/capture', url: '/capture/', body: { api_key: PROJECT_KEY, event: 'e', distinct_id: 'u' } },
    { label: 'batch', method: 'POST', route: '/batch', url: '/batch/', body: { api_key: PROJECT_KEY, batch: [{ event: 'e', distinct_id: 'u' }] } },
    { label: 'capture, unknown project key', method: 'POST', route: '/capture', url: '/capture/', body: { api_key: 'phc_nope', event: 'e', distinct_id: 'u' } },
    { label: 'capture, empty body', method: 'POST', route: '/e', url: '/e/', body: '' },
    { label: 'capture, not JSON', method: 'POST', route: '/i/v0/e', url: '/i/v0/e/', body: '{"api_key": nope' },
    { label: 'flags v2', method: 'POST', route: '/flags', url: '/flags/?v=2', body: identify },
    { label: 'flags v1', method: 'POST', route: '/flags', url: '/flags/?v=1', body: identify },
    { label: 'flags with config', method: 'POST', route: '/flags', url: '/flags/?v=2&config=true', body: identify },
    { label: 'flags without distinct_id', method: 'POST', route: '/flags', url: '/flags/?v=2', body: { token: PROJECT_KEY } },
    { label: 'flags defaults', method: 'GET', route: '/flags', url: '/flags/' },
    ...[1, 2, 3, 4].map((v): Sample => ({ label: `decide v${v}`, method: 'POST', route: '/decide', url: `/decide/?v=${v}`, body: identify })),
    { label: 'decide defaults', method: 'GET', route: '/decide', url: '/decide/' },
    { label: 'remote config', method: 'GET', route: '/array/:token/config', url: `/array/${PROJECT_KEY}/config` },
    { label: 'remote config, unknown key', method: 'GET', route: '/array/:token/config', url: '/array/phc_nope/config' },
    ...['/api/surveys', '/api/early_access_features', '/api/web_experiments', '/api/product_tours'].flatMap((route): Sample[] => [
      { label: `${route} (posthog-js)`, method: 'GET', route, url: `${route}/?token=${PROJECT_KEY}` },
      { label: `${route}, no token`, method: 'GET', route, url: `${route}/` },
    ]),
    { label: 'definitions', method: 'GET', route: '/flags/definitions', url: `/flags/definitions?token=${PROJECT_KEY}` },
    { label: 'definitions, not modified', method: 'GET', route: '/flags/definitions', url: `/flags/definitions?token=${PROJECT_KEY}`, headers: { 'if-none-match': current.headers.get('etag') ?? '' } },
    { label: 'legacy definitions', method: 'GET', route: '/api/feature_flag/local_evaluation', url: `/api/feature_flag/local_evaluation?token=${PROJECT_KEY}&send_cohorts` },
    { label: 'project definitions', method: 'GET', route: `${FF}/local_evaluation`, url: '/api/projects/@current/feature_flags/local_evaluation/' },
    { label: 'flag list', method: 'GET', route: FF, url: '/api/projects/@current/feature_flags/?limit=1' },
    { label: 'legacy flag list', method: 'GET', route: '/api/feature_flag', url: `/api/feature_flag/?token=${PROJECT_KEY}` },
    { label: 'flag', method: 'GET', route: `${FF}/:id`, url: `/api/projects/@current/feature_flags/${flag.body.id}/` },
    { label: 'flag update', method: 'PATCH', route: `${FF}/:id`, url: `/api/projects/@current/feature_flags/${flag.body.id}/`, body: { name: 'Documented' } },
    { label: 'flag create, no key', method: 'POST', route: FF, url: '/api/projects/@current/feature_flags/', body: { name: 'keyless' } },
    { label: 'flag create, body not an object', method: 'POST', route: FF, url: '/api/projects/@current/feature_flags/', body: [1] },
    { label: 'flag hard delete', method: 'DELETE', route: `${FF}/:id`, url: `/api/projects/@current/feature_flags/${flag.body.id}/` },
    { label: 'flag that does not exist', method: 'GET', route: `${FF}/:id`, url: '/api/projects/@current/feature_flags/987654/' },
    { label: 'flag list, no credentials', method: 'GET', route: FF, url: '/api/projects/@current/feature_flags/', client: api.withKey(null) },
    { label: 'flag list, invalid key', method: 'GET', route: FF, url: '/api/projects/@current/feature_flags/', client: api.withKey('phx_nope') },
    { label: 'flag list, key without the scope', method: 'GET', route: FF, url: '/api/projects/@current/feature_flags/', client: api.withKey(narrow.body.value) },
    { label: 'blast radius', method: 'POST', route: `${FF}/user_blast_radius`, url: '/api/projects/@current/feature_flags/user_blast_radius/', body: { condition: { properties: [] } } },
    { label: 'projects', method: 'GET', route: '/api/projects', url: '/api/projects/' },
    { label: 'project', method: 'GET', route: P, url: '/api/projects/@current/' },
    { label: 'project update, bad timezone', method: 'PATCH', route: P, url: '/api/projects/@current/', body: { timezone: '' } },
    { label: 'session state', method: 'GET', route: '/api/login', url: '/api/login', client: api.withKey(null) },
    { label: 'sign-in, wrong password', method: 'POST', route: '/api/login', url: '/api/login', body: { email: 'nobody@example.com', password: 'nope' }, client: api.withKey(null) },
    { label: 'key delete', method: 'DELETE', route: '/api/personal_api_keys/:id', url: `/api/personal_api_keys/${throwaway.body.id}/` },
    { label: 'key create', method: 'POST', route: '/api/personal_api_keys', url: '/api/personal_api_keys/', body: { label: 'sampled', scopes: ['cohort:read'] } },
    { label: 'persons', method: 'GET', route: `${P}/persons`, url: '/api/projects/@current/persons/' },
    { label: 'persons as CSV', method: 'GET', route: `${P}/persons`, url: '/api/projects/@current/persons/?format=csv' },
    { label: 'person', method: 'GET', route: `${P}/persons/:id`, url: `/api/projects/@current/persons/${personId}/` },
    { label: 'events', method: 'GET', route: `${P}/events`, url: '/api/projects/@current/events/' },
    { label: 'event', method: 'GET', route: `${P}/events/:id`, url: `/api/projects/@current/events/${eventId}/` },
    { label: 'event definitions', method: 'GET', route: `${P}/event_definitions`, url: '/api/projects/@current/event_definitions/' },
    { label: 'cohort create', method: 'POST', route: `${P}/cohorts`, url: '/api/projects/@current/cohorts/', body: { name: 'sampled', groups: [{ properties: [] }] } },
    { label: 'cohorts', method: 'GET', route: `${P}/cohorts`, url: '/api/projects/@current/cohorts/' },
    { label: 'cohort', method: 'GET', route: `${P}/cohorts/:id`, url: `/api/projects/@current/cohorts/${cohort.body.id}/` },
    { label: 'actions', method: 'GET', route: `${P}/actions`, url: '/api/projects/@current/actions/' },
    { label: 'action', method: 'GET', route: `${P}/actions/:id`, url: `/api/projects/@current/actions/${action.body.id}/` },
    { label: 'annotation create', method: 'POST', route: `${P}/annotations`, url: '/api/projects/@current/annotations/', body: { content: 'sampled', date_marker: '2026-01-01T00:00:00Z' } },
    { label: 'annotations', method: 'GET', route: `${P}/annotations`, url: '/api/projects/@current/annotations/' },
    { label: 'web overview', method: 'POST', route: `${P}/query`, url: '/api/projects/@current/query/', body: { query: { kind: 'WebOverviewQuery', properties: [] } } },
    { label: 'experiments', method: 'GET', route: `${P}/experiments`, url: '/api/projects/@current/experiments/' },
    { label: 'experiment update', method: 'PATCH', route: `${P}/experiments/:id`, url: `/api/projects/@current/experiments/${experiment.body.id}/`, body: { description: 'sampled' } },
    { label: 'insights', method: 'GET', route: `${P}/insights`, url: '/api/projects/@current/insights/' },
    { label: 'insight', method: 'GET', route: `${P}/insights/:id`, url: `/api/projects/@current/insights/${insight.body.id}/` },
    { label: 'dashboards', method: 'GET', route: `${P}/dashboards`, url: '/api/projects/@current/dashboards/' },
    { label: 'dashboard', method: 'GET', route: `${P}/dashboards/:id`, url: `/api/projects/@current/dashboards/${dashboard.body.id}/` },
    { label: 'funnel', method: 'GET', route: `${P}/insights/funnel`, url: `/api/projects/@current/insights/funnel/?events=${funnel}` },
    { label: 'retention', method: 'GET', route: `${P}/insights/retention`, url: '/api/projects/@current/insights/retention/' },
    { label: 'paths', method: 'GET', route: `${P}/insights/path`, url: '/api/projects/@current/insights/path/' },
    { label: 'HogQL', method: 'POST', route: `${P}/query`, url: '/api/projects/@current/query/', body: { query: { kind: 'HogQLQuery', query: 'SELECT event, count() FROM events GROUP BY event' } } },
    { label: 'flag activity', method: 'GET', route: `${FF}/:id/activity`, url: `/api/projects/@current/feature_flags/${flag.body.id}/activity/` },
    { label: 'flag usage', method: 'GET', route: `${FF}/:id/usage`, url: `/api/projects/@current/feature_flags/${flag.body.id}/usage/?days=3` },
    { label: 'flag revert', method: 'POST', route: `${FF}/:id/revert`, url: `/api/projects/@current/feature_flags/${flag.body.id}/revert/`, body: { version: 1 } },
    { label: 'flag revert, unknown version', method: 'POST', route: `${FF}/:id/revert`, url: `/api/projects/@current/feature_flags/${flag.body.id}/revert/`, body: { version: 999 } },
    { label: 'scheduled change', method: 'POST', route: `${P}/scheduled_changes`, url: '/api/projects/@current/scheduled_changes/', body: { record_id: flag.body.id, model_name: 'FeatureFlag', scheduled_at: '2099-01-01T00:00:00Z', payload: { operation: 'update_status', value: false } } },
    { label: 'scheduled changes', method: 'GET', route: `${P}/scheduled_changes`, url: '/api/projects/@current/scheduled_changes/' },
    { label: 'OFREP bulk', method: 'POST', route: '/ofrep/v1/evaluate/flags', url: '/ofrep/v1/evaluate/flags', body: { context: { targetingKey: 'documented-user' } }, headers: { authorization: `Bearer ${PROJECT_KEY}` }, client: api.withKey(null) },
    { label: 'OFREP one flag', method: 'POST', route: '/ofrep/v1/evaluate/flags/:key', url: `/ofrep/v1/evaluate/flags/${flag.body.key}`, body: { context: { targetingKey: 'documented-user' } }, headers: { 'x-api-key': PROJECT_KEY }, client: api.withKey(null) },
    { label: 'OFREP missing flag', method: 'POST', route: '/ofrep/v1/evaluate/flags/:key', url: '/ofrep/v1/evaluate/flags/nope', body: { context: { targetingKey: 'u' } }, headers: { 'x-api-key': PROJECT_KEY }, client: api.withKey(null) },
    { label: 'OFREP without targeting key', method: 'POST', route: '/ofrep/v1/evaluate/flags', url: '/ofrep/v1/evaluate/flags', body: { context: {} }, headers: { 'x-api-key': PROJECT_KEY }, client: api.withKey(null) },
    { label: 'persons activity', method: 'GET', route: `${P}/persons/activity`, url: '/api/projects/@current/persons/activity/' },
    { label: 'persons of a trend point', method: 'GET', route: `${P}/persons/trends`, url: `/api/projects/@current/persons/trends/?events=${encodeURIComponent('[{"id":"signed_up"}]')}&entity_id=signed_up&entity_type=events` },
    { label: 'persons of a funnel step', method: 'GET', route: `${P}/persons/funnel`, url: `/api/projects/@current/persons/funnel/?events=${funnel}&funnel_step=1` },
    { label: 'persons of a stickiness point', method: 'GET', route: `${P}/persons/stickiness`, url: `/api/projects/@current/persons/stickiness/?events=${encodeURIComponent('[{"id":"signed_up"}]')}&stickiness_days=1&entity_id=signed_up&entity_type=events` },
    { label: 'members', method: 'GET', route: '/api/organizations/:organization_id/members', url: '/api/organizations/@current/members/' },
    { label: 'keys', method: 'GET', route: '/api/personal_api_keys', url: '/api/personal_api_keys/' },
    { label: 'this key', method: 'GET', route: '/api/personal_api_keys/@current', url: '/api/personal_api_keys/@current/' },
    { label: 'me', method: 'GET', route: '/api/users/@me', url: '/api/users/@me/' },
    { label: 'organization', method: 'GET', route: '/api/organizations/:organization_id', url: '/api/organizations/@current/' },
    { label: 'trend', method: 'GET', route: `${P}/insights/trend`, url: '/api/projects/@current/insights/trend/?events=[{"id":"e"}]' },
    { label: 'schema', method: 'GET', route: '/api/schema', url: '/api/schema/?format=json' },
  ];

  const checked = new Set<string>();
  for (const s of samples) {
    const client = s.client ?? api;
    const res = await client.request(s.method, s.url, s.body, s.headers);
    const op = deref.paths[openApiPath(s.route)]?.[s.method.toLowerCase()];
    if (!op) {
      t.fail(`${s.label}: ${s.method} ${s.route} is not described`);
      continue;
    }
    const documented = op.responses[String(res.status)] ?? op.responses[`${String(res.status)[0]}XX`];
    if (!t.ok(documented, `${s.label}: ${res.status} is documented for ${op.operationId} (${Object.keys(op.responses).join(', ')})`)) {
      t.comment(res.text.slice(0, 300));
      continue;
    }
    checked.add(String(res.status));
    const contentType = res.headers.get('content-type') ?? '';
    const medias = documented.content ? Object.keys(documented.content) : [];
    if (medias.length === 0) {
      t.equal(res.text, '', `${s.label}: no body, as documented`);
      continue;
    }
    // A documented media type, exactly or with parameters (`text/csv; charset=utf-8`).
    const media = medias.find((m) => contentType === m || contentType.startsWith(`${m};`));
    if (!t.ok(media, `${s.label}: ${contentType} is documented (${medias.join(', ')})`)) continue;
    const schema = documented.content[media!].schema;
    if (schema === undefined) continue; // a JSON body whose shape the document leaves open
    t.ok(Object.keys(schema).length > 0 && !JSON.stringify(schema).includes('"$ref"'), `${s.label}: the schema is resolved`);
    const valid = Check(schema, media!.includes('json') ? res.body : res.text);
    t.ok(valid, `${s.label}: the ${res.status} body matches the documented schema`);
    if (!valid) t.comment(`${JSON.stringify(res.body).slice(0, 600)}\nerrors: ${JSON.stringify(Compile(schema).Errors(res.body)[1].slice(0, 3))}`);
  }
  t.same([...checked].sort(), ['200', '201', '204', '304', '400', '401', '403', '404', '405'], 'the statuses sampled');
});
