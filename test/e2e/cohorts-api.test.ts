// The cohorts API over HTTP: property cohorts (nested groups, negation, references to other cohorts, the legacy
// `groups` form), static cohorts and their member list, validation, soft delete, the persons of a cohort,
// /persons/cohorts/, and flags targeting cohorts. Each test that counts persons runs in a project of its own.
import t from 'tap';
import { Client, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);

interface Project {
  id: number;
  token: string;
  base: string;
}

async function newProject(name: string): Promise<Project> {
  const res = await server.api.post('/api/projects/', { name });
  if (res.status !== 201) throw new Error(`project create answered ${res.status}: ${res.text}`);
  return { id: res.body.id, token: res.body.api_token, base: `/api/projects/${res.body.id}` };
}

async function ingest(p: Project, batch: object[]): Promise<void> {
  const res = await fetch(`${server.q.base}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: p.token, batch }),
  });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
}

/** Creates persons (by ingestion) with the given properties; resolves with them by distinct id. */
async function persons(p: Project, people: Record<string, Record<string, unknown>>): Promise<Record<string, any>> {
  await ingest(p, Object.entries(people).map(([d, set]) => ({ event: 'seen', distinct_id: d, properties: { $set: set } })));
  const out: Record<string, any> = {};
  for (const d of Object.keys(people)) out[d] = (await server.api.get(`${p.base}/persons/?distinct_id=${d}`)).body.results[0];
  return out;
}

const person = (key: string, value: unknown, operator?: string, extra: object = {}) =>
  ({ key, value, type: 'person', ...(operator ? { operator } : {}), ...extra });
const group = (type: 'AND' | 'OR', ...values: object[]) => ({ type, values });
const inCohort = (id: number, operator?: string) => ({ key: 'id', type: 'cohort', value: id, ...(operator ? { operator } : {}) });

async function memberIds(p: Project, cohortId: number): Promise<string[]> {
  const res = await server.api.get(`${p.base}/cohorts/${cohortId}/persons/`);
  if (res.status !== 200) throw new Error(`cohort persons answered ${res.status}: ${res.text}`);
  return res.body.results.map((x: any) => x.distinct_ids[0]).sort();
}

async function flagFor(p: Project, distinctId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.q.base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: p.token, distinct_id: distinctId }) });
  return ((await res.json()) as { featureFlags: Record<string, unknown> }).featureFlags;
}

t.test('a property cohort is created with every response field and counts its persons', async (t) => {
  const p = await newProject('create');
  await persons(p, { ann: { plan: 'pro' }, bob: { plan: 'free' }, cid: { plan: 'pro' } });
  const filters = { properties: group('OR', group('AND', person('plan', 'pro'))) };
  const res = await server.api.post(`${p.base}/cohorts/`, { name: 'Pro users', description: 'paying', filters });
  t.equal(res.status, 201);
  t.match(res.body, {
    id: Number, name: 'Pro users', description: 'paying', groups: [], is_static: false, deleted: false,
    is_calculating: false, created_by: { id: Number, email: 'admin@quill.local' }, created_at: String,
    last_calculation: String, errors_calculating: 0, count: 2, version: 1,
  });
  t.same(res.body.filters, filters);
  t.same((await server.api.get(`${p.base}/cohorts/${res.body.id}/`)).body, res.body, 'retrieve answers the same record');
  t.same(await memberIds(p, res.body.id), ['ann', 'cid']);
  await persons(p, { dan: { plan: 'pro' } });
  t.equal((await server.api.get(`${p.base}/cohorts/${res.body.id}/`)).body.count, 3, 'membership follows person properties');
});

t.test('the legacy groups form is converted to filters (an OR of ANDs) and echoed back', async (t) => {
  const p = await newProject('legacy');
  await persons(p, { a: { plan: 'pro', seats: 5 }, b: { plan: 'pro', seats: 1 }, c: { country: 'NO' } });
  const groups = [{ properties: [person('plan', 'pro'), person('seats', 2, 'gt')] }, { properties: [person('country', 'NO')] }];
  const res = await server.api.post(`${p.base}/cohorts/`, { name: 'legacy', groups });
  t.equal(res.status, 201);
  t.same(res.body.groups, groups);
  t.same(res.body.filters, { properties: group('OR', group('AND', ...groups[0]!.properties), group('AND', ...groups[1]!.properties)) });
  t.same(await memberIds(p, res.body.id), ['a', 'c']);
  const flat = await server.api.post(`${p.base}/cohorts/`, { name: 'flat list', filters: { properties: [person('plan', 'pro')] } });
  t.same(flat.body.filters.properties, group('AND', person('plan', 'pro')), 'a bare list of filters reads as an AND group');
  t.equal(flat.body.count, 2);
});

t.test('nested groups, negation and every kind of operator', async (t) => {
  const p = await newProject('nested');
  await persons(p, {
    eu: { country: 'NO', email: 'eu@corp.com', age: 40 },
    us: { country: 'US', email: 'us@gmail.com', age: 22 },
    free: { country: 'NO', email: 'free@gmail.com', age: 17 },
  });
  const make = async (properties: object) => {
    const res = await server.api.post(`${p.base}/cohorts/`, { name: 'n', filters: { properties } });
    t.equal(res.status, 201, JSON.stringify(properties));
    return res.body.id as number;
  };
  t.same(await memberIds(p, await make(group('AND', person('email', 'gmail', 'icontains', { negation: true })))), ['eu'],
    'negation inverts a leaf');
  t.same(await memberIds(p, await make(group('AND', group('OR', person('country', 'US'), person('age', 30, 'gt')), person('age', 18, 'gte')))),
    ['eu', 'us']);
  t.same(await memberIds(p, await make(group('AND', person('email', '^[a-z]+@gmail', 'regex'), person('company', null, 'is_not_set')))),
    ['free', 'us']);
  t.same(await memberIds(p, await make({})), ['eu', 'free', 'us'], 'the empty group matches everyone');
  t.same(await memberIds(p, await make(group('OR'))), [], 'an OR group without values matches nobody');
});

t.test('cohorts can reference other cohorts, with in and not_in', async (t) => {
  const p = await newProject('references');
  await persons(p, { a: { plan: 'pro', country: 'NO' }, b: { plan: 'pro', country: 'US' }, c: { plan: 'free', country: 'NO' } });
  const pro = (await server.api.post(`${p.base}/cohorts/`, { name: 'pro', filters: { properties: group('AND', person('plan', 'pro')) } })).body.id;
  const norwegianPro = await server.api.post(`${p.base}/cohorts/`, {
    name: 'norwegian pro', filters: { properties: group('AND', inCohort(pro), person('country', 'NO')) },
  });
  t.equal(norwegianPro.status, 201);
  t.same(await memberIds(p, norwegianPro.body.id), ['a']);
  const notPro = await server.api.post(`${p.base}/cohorts/`, { name: 'not pro', filters: { properties: group('AND', inCohort(pro, 'not_in')) } });
  t.same(await memberIds(p, notPro.body.id), ['c']);

  await server.api.patch(`${p.base}/cohorts/${pro}/`, { filters: { properties: group('AND', person('country', 'US')) } });
  t.same(await memberIds(p, norwegianPro.body.id), [], 'a change of the referenced cohort shows through');

  const cycle = await server.api.patch(`${p.base}/cohorts/${pro}/`, { filters: { properties: group('AND', inCohort(norwegianPro.body.id)) } });
  t.equal(cycle.status, 400, 'a reference cycle is refused');
  t.match(cycle.body, { type: 'validation_error', code: 'invalid_input', attr: 'filters' });
  const self = await server.api.patch(`${p.base}/cohorts/${pro}/`, { filters: { properties: group('AND', inCohort(pro)) } });
  t.equal(self.status, 400);
});

t.test('definition validation', async (t) => {
  const p = await newProject('validation');
  const create = (body: object) => server.api.post(`${p.base}/cohorts/`, { name: 'v', ...body });
  const behavioral = await create({ filters: { properties: group('AND', { key: '$pageview', type: 'behavioral', value: 'performed_event', event_type: 'events' }) } });
  t.equal(behavioral.status, 400);
  t.match(behavioral.body, { type: 'validation_error', code: 'behavioral_cohort_found', attr: 'filters' });
  const legacyEvent = await create({ groups: [{ event_id: '$pageview', days: 7 }] });
  t.equal(legacyEvent.status, 400);
  t.equal(legacyEvent.body.code, 'behavioral_cohort_found');
  const eventProp = await create({ filters: { properties: group('AND', { key: '$browser', value: 'Chrome', type: 'event' }) } });
  t.equal(eventProp.body.code, 'behavioral_cohort_found');
  const missing = await create({ filters: { properties: group('AND', inCohort(987654)) } });
  t.equal(missing.status, 400);
  t.match(missing.body, { type: 'validation_error', code: 'cohort_does_not_exist', attr: 'filters', detail: /987654/ });
  const cases: [string, object][] = [
    ['unknown operator', { filters: { properties: group('AND', person('a', 1, 'sorta')) } }],
    ['group filters', { filters: { properties: group('AND', { key: 'a', value: 1, type: 'group', group_type_index: 0 }) } }],
    ['bad group type', { filters: { properties: { type: 'XOR', values: [person('a', 1)] } } }],
    ['leaf without key', { filters: { properties: group('AND', { value: 1, type: 'person' }) } }],
    ['bad regex', { filters: { properties: group('AND', person('a', '(', 'regex')) } }],
    ['non-boolean negation', { filters: { properties: group('AND', person('a', 1, 'exact', { negation: 'yes' })) } }],
    ['filters not an object', { filters: [person('a', 1)] }],
    ['groups not a list', { groups: { properties: [] } }],
  ];
  for (const [what, body] of cases) {
    const res = await create(body);
    t.equal(res.status, 400, what);
    t.equal(res.body.type, 'validation_error', what);
    t.ok(res.body.attr === 'filters' || res.body.attr === 'groups', `${what}: attr ${res.body.attr}`);
  }
  const badName = await create({ name: 42 });
  t.equal(badName.status, 400);
  t.equal(badName.body.attr, 'name');
  const badStatic = await create({ is_static: 'yes' });
  t.equal(badStatic.status, 400);
  t.same(badStatic.body, { type: 'validation_error', code: 'invalid_input', detail: 'Must be a valid boolean.', attr: 'is_static' });
  const members = await create({ filters: { properties: group('AND', person('a', 1)) }, distinct_ids: ['x'] });
  t.equal(members.status, 400, 'a property cohort has no member list');
  t.equal(members.body.attr, 'distinct_ids');
});

t.test('list, pagination, PATCH, soft delete and the refused hard delete', async (t) => {
  const p = await newProject('lifecycle');
  const ids: number[] = [];
  for (const name of ['one', 'two', 'three']) ids.push((await server.api.post(`${p.base}/cohorts/`, { name, filters: { properties: group('AND') } })).body.id);
  const list = await server.api.get(`${p.base}/cohorts/?limit=2`);
  t.equal(list.status, 200);
  t.equal(list.body.count, 3);
  t.same(list.body.results.map((c: any) => c.name), ['three', 'two'], 'newest first');
  t.equal(list.body.next, `${server.q.base}${p.base}/cohorts/?limit=2&offset=2`);
  t.equal(list.body.previous, null);

  const renamed = await server.api.patch(`${p.base}/cohorts/${ids[0]}/`, { name: 'uno', description: 'first' });
  t.equal(renamed.status, 200);
  t.match(renamed.body, { name: 'uno', description: 'first', version: 2 });
  const put = await server.api.request('PUT', `${p.base}/cohorts/${ids[0]}/`, { name: 'eins' });
  t.equal(put.body.name, 'eins');
  const flip = await server.api.patch(`${p.base}/cohorts/${ids[0]}/`, { is_static: true });
  t.equal(flip.status, 400);
  t.equal(flip.body.attr, 'is_static');

  const hard = await server.api.delete(`${p.base}/cohorts/${ids[1]}/`);
  t.equal(hard.status, 405);
  t.match(hard.body, { type: 'invalid_request', code: 'method_not_allowed', detail: /PATCH/ });
  t.equal((await server.api.get(`${p.base}/cohorts/${ids[1]}/`)).body.deleted, false, 'the cohort is untouched');

  const soft = await server.api.patch(`${p.base}/cohorts/${ids[1]}/`, { deleted: true });
  t.equal(soft.status, 200);
  t.equal(soft.body.deleted, true);
  t.same((await server.api.get(`${p.base}/cohorts/`)).body.results.map((c: any) => c.id), [ids[2], ids[0]]);
  t.equal((await server.api.get(`${p.base}/cohorts/${ids[1]}/`)).body.deleted, true, 'a deleted cohort can still be read');
  const refToDeleted = await server.api.post(`${p.base}/cohorts/`, { name: 'ref', filters: { properties: group('AND', inCohort(ids[1]!)) } });
  t.equal(refToDeleted.body.code, 'cohort_does_not_exist', 'deleted cohorts cannot be referenced');

  t.equal((await server.api.get(`${p.base}/cohorts/999999/`)).status, 404);
  t.equal((await server.api.get(`${p.base}/cohorts/abc/`)).status, 404);
  t.equal((await server.api.patch(`${p.base}/cohorts/999999/`, { name: 'x' })).status, 404);
  t.equal((await server.api.delete(`${p.base}/cohorts/999999/`)).status, 404);
});

t.test('static cohorts: members by distinct id, person id or uuid; add and remove', async (t) => {
  const p = await newProject('static');
  const people = await persons(p, { s1: {}, s2: {}, s3: {}, s4: {} });
  const res = await server.api.post(`${p.base}/cohorts/`, {
    name: 'uploaded', is_static: true, distinct_ids: ['s1', 'nobody'], person_ids: [people.s2.id, people.s3.uuid],
  });
  t.equal(res.status, 201);
  t.match(res.body, { is_static: true, count: 3 }, 'unknown references are skipped');
  const id = res.body.id;
  t.same(await memberIds(p, id), ['s1', 's2', 's3']);

  const add = await server.api.patch(`${p.base}/cohorts/${id}/add_persons_to_static_cohort/`, { person_ids: [people.s4.uuid] });
  t.equal(add.status, 200);
  t.same(add.body, { success: true });
  t.same(await memberIds(p, id), ['s1', 's2', 's3', 's4']);
  const remove = await server.api.patch(`${p.base}/cohorts/${id}/remove_person_from_static_cohort/`, { person_id: people.s1.id });
  t.equal(remove.status, 200);
  t.same(await memberIds(p, id), ['s2', 's3', 's4']);
  const viaPatch = await server.api.patch(`${p.base}/cohorts/${id}/`, { distinct_ids: ['s1'] });
  t.equal(viaPatch.body.count, 4, 'PATCH adds members too');

  t.equal((await server.api.patch(`${p.base}/cohorts/${id}/add_persons_to_static_cohort/`, {})).body.attr, 'person_ids');
  const badIds = await server.api.patch(`${p.base}/cohorts/${id}/add_persons_to_static_cohort/`, { person_ids: 'x' });
  t.equal(badIds.status, 400);
  t.equal(badIds.body.attr, 'person_ids');
  const noPerson = await server.api.patch(`${p.base}/cohorts/${id}/remove_person_from_static_cohort/`, {});
  t.equal(noPerson.status, 400);
  t.same(noPerson.body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'person_id' });
  t.equal((await server.api.patch(`${p.base}/cohorts/${id}/remove_person_from_static_cohort/`, { person_id: 999999 })).status, 404);
  const dynamic = (await server.api.post(`${p.base}/cohorts/`, { name: 'dyn', filters: { properties: group('AND') } })).body.id;
  const notStatic = await server.api.patch(`${p.base}/cohorts/${dynamic}/add_persons_to_static_cohort/`, { person_ids: [people.s1.id] });
  t.equal(notStatic.status, 400);
  t.equal(notStatic.body.type, 'validation_error');

  t.equal((await server.api.delete(`${p.base}/persons/${people.s2.id}/`)).status, 204);
  t.same(await memberIds(p, id), ['s1', 's3', 's4'], 'a deleted person leaves its static cohorts');

  // A member merged into a non-member: the membership moves to the surviving person.
  await ingest(p, [{ event: 'x', distinct_id: 'joiner', properties: {} }]);
  const joiner = (await server.api.get(`${p.base}/persons/?distinct_id=joiner`)).body.results[0];
  await ingest(p, [{ event: '$identify', distinct_id: 'joiner', properties: { $anon_distinct_id: 's4' } }]);
  const merged = (await server.api.get(`${p.base}/persons/?distinct_id=s4`)).body.results[0];
  t.equal(merged.id, joiner.id, 's4 was merged into the joiner');
  t.same(await memberIds(p, id), ['joiner', 's1', 's3'], 'the membership moved with the merge');
});

t.test('GET /cohorts/:id/persons/ pages and renders CSV', async (t) => {
  const p = await newProject('cohort-persons');
  await persons(p, { p1: { k: 'v' }, p2: { k: 'v' }, p3: { k: 'v' }, p4: { k: 'other' } });
  const id = (await server.api.post(`${p.base}/cohorts/`, { name: 'k', filters: { properties: group('AND', person('k', 'v')) } })).body.id;
  const page = await server.api.get(`${p.base}/cohorts/${id}/persons/?limit=2`);
  t.equal(page.status, 200);
  t.equal(page.body.count, 3);
  t.equal(page.body.results.length, 2);
  t.match(page.body.results[0], { id: Number, name: String, distinct_ids: Array, properties: { k: 'v' }, uuid: String });
  t.equal(page.body.next, `${server.q.base}${p.base}/cohorts/${id}/persons/?limit=2&offset=2`);
  const rest = await server.api.get(page.body.next.slice(server.q.base.length));
  t.equal(rest.body.results.length, 1);
  const csv = await server.api.get(`${p.base}/cohorts/${id}/persons/?format=csv`);
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  t.equal(csv.text.split('\r\n')[0], 'created_at,distinct_ids.0,id,is_identified,name,properties.k,uuid');
  t.equal(csv.text.split('\r\n').length, 5, 'header, three rows, trailing CRLF');
  t.equal((await server.api.get(`${p.base}/cohorts/999999/persons/`)).status, 404);
});

t.test('GET /persons/cohorts/?person_id= lists the cohorts a person is in', async (t) => {
  const p = await newProject('person-cohorts');
  const people = await persons(p, { in: { plan: 'pro' }, out: { plan: 'free' } });
  const pro = (await server.api.post(`${p.base}/cohorts/`, { name: 'pro', filters: { properties: group('AND', person('plan', 'pro')) } })).body.id;
  const uploaded = (await server.api.post(`${p.base}/cohorts/`, { name: 'uploaded', is_static: true, distinct_ids: ['in'] })).body.id;
  const gone = (await server.api.post(`${p.base}/cohorts/`, { name: 'gone', filters: { properties: group('AND') } })).body.id;
  await server.api.patch(`${p.base}/cohorts/${gone}/`, { deleted: true });

  const res = await server.api.get(`${p.base}/persons/cohorts/?person_id=${people.in.id}`);
  t.equal(res.status, 200);
  t.same(res.body.results.map((c: any) => c.id), [pro, uploaded], 'static and property memberships; deleted cohorts left out');
  t.match(res.body.results[0], { name: 'pro', is_static: false, count: 1, filters: Object, created_by: Object });
  t.same((await server.api.get(`${p.base}/persons/cohorts/?person_id=${people.in.uuid}`)).body, res.body, 'by uuid too');
  t.same((await server.api.get(`${p.base}/persons/cohorts/?person_id=${people.out.id}`)).body, { results: [] });

  const missing = await server.api.get(`${p.base}/persons/cohorts/`);
  t.equal(missing.status, 400);
  t.same(missing.body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'person_id' });
  t.equal((await server.api.get(`${p.base}/persons/cohorts/?person_id=999999`)).status, 404);
  t.equal((await server.api.get(`${p.base}/persons/cohorts/?person_id=abc`)).status, 400);
});

t.test('persons list filters by cohort', async (t) => {
  const p = await newProject('list-by-cohort');
  await persons(p, { a: { plan: 'pro' }, b: { plan: 'free' } });
  const pro = (await server.api.post(`${p.base}/cohorts/`, { name: 'pro', filters: { properties: group('AND', person('plan', 'pro')) } })).body.id;
  const res = await server.api.get(`${p.base}/persons/?cohort=${pro}`);
  t.same(res.body.results.map((x: any) => x.distinct_ids[0]), ['a']);
  t.equal((await server.api.get(`${p.base}/persons/?cohort=x`)).status, 400);
});

t.test('flags target cohorts, and see cohort changes as soon as the API answers', async (t) => {
  const p = await newProject('flags');
  const people = await persons(p, { vip: { plan: 'pro' }, pleb: { plan: 'free' } });
  const cohort = (await server.api.post(`${p.base}/cohorts/`, { name: 'pro', filters: { properties: group('AND', person('plan', 'pro')) } })).body.id;
  const uploaded = (await server.api.post(`${p.base}/cohorts/`, { name: 'beta', is_static: true, distinct_ids: ['pleb'] })).body.id;
  const flag = await server.api.post(`${p.base}/feature_flags/`, {
    key: 'for-pros', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort }], rollout_percentage: 100 }] },
  });
  t.equal(flag.status, 201);
  await server.api.post(`${p.base}/feature_flags/`, {
    key: 'for-beta', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: uploaded }], rollout_percentage: 100 }] },
  });
  t.match(await flagFor(p, 'vip'), { 'for-pros': true });
  t.equal((await flagFor(p, 'pleb'))['for-pros'], false, 'free users are not in the cohort');
  t.match(await flagFor(p, 'pleb'), { 'for-beta': true }, 'static membership counts for flags');

  await server.api.patch(`${p.base}/cohorts/${cohort}/`, { filters: { properties: group('AND', person('plan', 'free')) } });
  t.match(await flagFor(p, 'pleb'), { 'for-pros': true }, 'the new definition is live on every worker');
  t.equal((await flagFor(p, 'vip'))['for-pros'], false);

  await server.api.patch(`${p.base}/cohorts/${uploaded}/remove_person_from_static_cohort/`, { person_id: people.pleb.uuid });
  t.equal((await flagFor(p, 'pleb'))['for-beta'], false, 'removal from a static cohort is live too');

  const missingCohort = await server.api.post(`${p.base}/feature_flags/`, {
    key: 'bad', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 424242 }] }] },
  });
  t.equal(missingCohort.status, 400);
  t.equal(missingCohort.body.code, 'cohort_does_not_exist');
});
