// Isolation matrix: every private route of the route table, generated from it (a new route is covered
// without touching this file, or fails here until its parameters have a fixture), is called with
//   (a) a key of another organization,
//   (b) a key of the same organization confined (scoped_teams) to another project,
//   (c) keys of the same organization without the route's scope (other objects' scopes; read for a write route),
//   (d) the project API key (phc_) as Bearer,
//   (e) no key,
// and must answer 401/403/404 with the documented error body and none of the victim's data. A positive control
// then calls every route with a key holding exactly the declared scope, proving that the paths and ids are real
// (a matrix whose calls all fail for another reason would prove nothing).
import t from 'tap';
import { ROUTES, type RouteDef } from '../../src/front/routes.js';
import { SCOPE_OBJECTS } from '../../src/domain/scopes.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, PROJECT_KEY, quillForFile, removeDir } from '../helpers/quill.js';

// POST /_backup needs a backup directory to reach its resource (the positive control makes one backup).
const backupDir = mkdtempSync(join(tmpdir(), 'quill-isolation-backups-'));
t.teardown(() => removeDir(backupDir));
const server = quillForFile(t, { env: { QUILL_OPERATOR_KEY: 'isolation-operator-key-0123456789', QUILL_BACKUP_DIR: backupDir } });

const PRIVATE = ROUTES.filter((r) => r.auth === 'personal');

/** Strings that only the victim's data contains; per class, so a case can allow what is legitimately its own. */
const MARK = {
  flag: 'victim-flag-7q1',
  person: 'victim-person-9d2',
  prop: 'victim-prop-3m5',
  event: 'victim-event-4k8',
  cohort: 'victim-cohort-5h3',
  dashboard: 'victim-dashboard-2w6',
  experiment: 'victim-experiment-3v8',
  action: 'victim-action-1z7',
  annotation: 'victim-annotation-5n2',
  role: 'victim-role-8j4',
  insight: 'victim-insight-1w7',
  key: 'victim-key-6p1',
  org: 'victim-org-2x9',
  recording: 'victim-recording-5s4',
  alert: 'victim-alert-6t3',
  subscription: 'victim-subscription-8r2',
  email: 'admin@quill.local',
};
const PROJECT_MARKS = [MARK.flag, MARK.person, MARK.prop, MARK.event, MARK.cohort, MARK.action, MARK.insight, MARK.experiment, MARK.recording, MARK.annotation, MARK.alert, MARK.subscription];
const ALL_MARKS = Object.values(MARK);

interface Victim {
  orgId: number;
  projectId: number;
  token: string;
  secondProjectId: number;
  ids: Record<string, string>;
  membershipId: string;
  accessId: string;
  /** A share password of the victim's per shared target (`dashboards`, `insights`, `web_analytics`). */
  passwordIds: Record<string, string>;
  userUuid: string;
  personId: number;
}
let victim: Victim;
let attacker: Client;
/** The project API key of the attacker's own project (public routes: OFREP). */
let attackerToken: string;
let confined: Client;
/** Per scope object: a key with every other object's write scope, and one with only this object's read scope. */
const withoutObject = new Map<string, Client>();
const readOnly = new Map<string, Client>();
/** Per required scope (or 'none'): a key holding exactly it. */
const exactly = new Map<string, Client>();

async function ok<T = any>(res: Promise<{ status: number; body: T; text: string }>, what: string): Promise<T> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what} answered ${r.status}: ${r.text}`);
  return r.body;
}

async function keyFor(scopes: string[], extra: Record<string, unknown> = {}): Promise<Client> {
  const body = await ok(server.api.post('/api/personal_api_keys/', { label: 'matrix', scopes, ...extra }), `key ${scopes.join(',')}`);
  return server.api.withKey(body.value);
}

t.before(async () => {
  const api = server.api;
  await ok(api.patch('/api/organizations/@current/', { name: MARK.org }), 'rename org');
  const me = await ok(api.get('/api/users/@me/'), 'me');
  const project = await ok(api.get('/api/projects/@current/'), 'project');
  // A remote-configuration flag, so its `remote_config/` route has something to answer (its payload is a mark too).
  const flag = await ok(api.post('/api/projects/@current/feature_flags/', {
    key: MARK.flag, is_remote_configuration: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: JSON.stringify(MARK.flag) } },
  }), 'flag');
  const ingest = await fetch(`${server.q.base}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: PROJECT_KEY, batch: [{ event: MARK.event, distinct_id: MARK.person, properties: { marker: MARK.prop, $set: { marker: MARK.prop } } }] }),
  });
  if (ingest.status !== 200) throw new Error(`batch answered ${ingest.status}`);
  // A session recording of the victim's (its session id is a mark), so `session_recordings/:id` has something to read.
  const recorded = await fetch(`${server.q.base}/s/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([{ event: '$snapshot', properties: { token: PROJECT_KEY, distinct_id: MARK.person, $session_id: MARK.recording, $window_id: 'w', $snapshot_data: [{ type: 4, timestamp: Date.now(), data: { href: 'https://victim.test/' } }] } }]),
  });
  if (recorded.status !== 200) throw new Error(`snapshots answered ${recorded.status}`);
  const events = await ok(api.get(`/api/projects/@current/events/?event=${MARK.event}`), 'events');
  const persons = await ok(api.get(`/api/projects/@current/persons/?distinct_id=${MARK.person}`), 'persons');
  const person = persons.results[0];
  const definitions = await ok(api.get(`/api/projects/@current/event_definitions/?search=${MARK.event}`), 'definitions');
  const propertyDefinitions = await ok(api.get('/api/projects/@current/property_definitions/?properties=marker'), 'property definitions');
  const cohort = await ok(api.post('/api/projects/@current/cohorts/', { name: MARK.cohort, is_static: true, person_ids: [person.uuid] }), 'cohort');
  const action = await ok(api.post('/api/projects/@current/actions/', { name: MARK.action, steps: [{ event: MARK.event }] }), 'action');
  const annotation = await ok(api.post('/api/projects/@current/annotations/', { content: MARK.annotation, date_marker: '2026-01-01T00:00:00Z' }), 'annotation');
  const role = await ok(api.post('/api/organizations/@current/roles/', { name: MARK.role }), 'role');
  const membership = await ok(api.post(`/api/organizations/@current/roles/${role.id}/role_memberships/`, { user_uuid: me.uuid }), 'membership');
  const access = await ok(api.post(`/api/projects/@current/feature_flags/${flag.id}/role_access/`, { role_id: role.id }), 'role access');
  // Within the rights of a personal_api_key:read key, so the positive control can read and delete it.
  const key = await ok(api.post('/api/personal_api_keys/', { label: MARK.key, scopes: ['personal_api_key:read'] }), 'victim key');
  const second = await ok(api.post('/api/projects/', { name: 'victim second project' }), 'second project');
  const insight = await ok(api.post('/api/projects/@current/insights/', { name: MARK.insight, filters: { insight: 'TRENDS', events: [{ id: MARK.event }] } }), 'insight');
  const dashboard = await ok(api.post('/api/projects/@current/dashboards/', { name: MARK.dashboard }), 'dashboard');
  const experiment = await ok(api.post('/api/projects/@current/experiments/', { name: MARK.experiment, feature_flag_key: 'victim-experiment-flag', start_date: '2026-01-01T00:00:00Z' }), 'experiment');
  // A scheduled change of the victim's flag, far ahead, so `scheduled_changes/:id` has something to read, edit and cancel.
  const scheduled = await ok(api.post('/api/projects/@current/scheduled_changes/', {
    record_id: String(flag.id), model_name: 'FeatureFlag', scheduled_at: '2099-01-01T00:00:00Z', payload: { operation: 'update_status', value: false },
  }), 'scheduled change');
  // Password-protected share links of the victim's dashboard, insight and web analytics page, one password each.
  const passwordIds: Record<string, string> = {};
  for (const [name, base] of [['dashboards', `dashboards/${dashboard.id}`], ['insights', `insights/${insight.id}`], ['web_analytics', 'web_analytics']]) {
    await ok(api.patch(`/api/projects/@current/${base}/sharing/`, { enabled: true, password_required: true }), `${name} sharing`);
    passwordIds[name!] = String((await ok(api.post(`/api/projects/@current/${base}/sharing/passwords/`, {}), `${name} share password`)).id);
  }
  // An alert and a subscription on the victim's insight (the subscription's first delivery far ahead).
  const alert = await ok(api.post('/api/projects/@current/alerts/', {
    insight: insight.id, name: MARK.alert, subscribed_users: [me.id], threshold: { configuration: { type: 'absolute', bounds: { upper: 1000 } } },
  }), 'alert');
  const subscription = await ok(api.post('/api/projects/@current/subscriptions/', {
    insight: insight.id, title: MARK.subscription, target_type: 'email', target_value: 'victim@example.com', frequency: 'yearly', start_date: '2099-01-01T00:00:00Z',
  }), 'subscription');
  // An asynchronous query of the victim's, so `query/:id` has a status to read and cancel.
  const asyncQuery = await api.post('/api/projects/@current/query/', { query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: MARK.event }] }, refresh: 'force_async' });
  if (asyncQuery.status !== 202) throw new Error(`async query answered ${asyncQuery.status}`);
  victim = {
    orgId: me.organization.numeric_id,
    projectId: project.id,
    token: project.api_token,
    secondProjectId: second.id,
    ids: {
      feature_flags: String(flag.id), persons: person.uuid, cohorts: String(cohort.id), actions: String(action.id), events: events.results[0].id,
      event_definitions: definitions.results[0].id, property_definitions: propertyDefinitions.results[0]?.id, roles: role.id, personal_api_keys: key.id, insights: String(insight.id),
      dashboards: String(dashboard.id), experiments: String(experiment.id), query: asyncQuery.body.query_status.id,
      scheduled_changes: String(scheduled.id), session_recordings: MARK.recording, annotations: String(annotation.id),
      alerts: alert.id, subscriptions: String(subscription.id),
    },
    membershipId: membership.id,
    accessId: access.id,
    passwordIds,
    userUuid: me.uuid,
    personId: person.id,
  };
  if (!victim.ids.events || !victim.ids.event_definitions || !victim.ids.property_definitions) throw new Error('victim event or definition missing');

  const other = await ok(api.post('/api/organizations/', { name: 'attacker org', email: 'attacker@example.org' }), 'attacker org');
  attacker = new Client(server.q.base, other.personal_api_key);
  attackerToken = (await ok(attacker.get('/api/projects/@current/'), 'attacker project')).api_token;
  confined = await keyFor(['*'], { scoped_teams: [victim.secondProjectId] });
  for (const object of SCOPE_OBJECTS) {
    withoutObject.set(object, await keyFor(SCOPE_OBJECTS.filter((o) => o !== object).map((o) => `${o}:write`)));
    readOnly.set(object, await keyFor([`${object}:read`]));
  }
  for (const scope of new Set(PRIVATE.map((r) => r.scope ?? 'none'))) exactly.set(scope, await keyFor(scope === 'none' ? [] : [scope]));
});

/** The concrete path of a route, with the victim's ids; throws for a parameter the matrix has no fixture for. */
function pathOf(route: RouteDef, projectId: number): string {
  const segments = route.path.split('/');
  const out = segments.map((seg, i) => {
    if (!seg.startsWith(':')) return seg;
    const name = seg.slice(1);
    if (name === 'project_id') return String(projectId);
    if (name === 'organization_id') return String(victim.orgId);
    if (name === 'membership_id') return victim.membershipId;
    if (name === 'access_id') return victim.accessId;
    if (name === 'password_id') return victim.passwordIds[segments.find((x) => x in victim.passwordIds) ?? ''] ?? '';
    if (name === 'id') {
      const id = victim.ids[segments[i - 1]!];
      if (id) return id;
    }
    throw new Error(`isolation matrix: no fixture for :${name} of ${route.method} ${route.path}; add one`);
  });
  const path = out.join('/') + '/';
  return route.projectFrom ? `${path}?token=${victim.token}` : path;
}

/** A body that would act if a refused call got through (fields every write route understands, the victim's ids). */
let calls = 0;
function bodyOf(route: RouteDef): unknown {
  if (route.body !== 'json') return undefined;
  const n = ++calls;
  return {
    key: `attack-flag-${n}`, name: `attack-${n}`, label: 'attack', email: `attack-${n}@example.com`,
    filters: { groups: [{ properties: [], rollout_percentage: 100 }] }, properties: { attack: 1 }, distinct_ids: ['attack-distinct'],
    role_id: victim?.ids.roles, user_uuid: victim?.userUuid, person_ids: [victim?.personId], person_id: victim?.personId,
    value: 'attack', $unset: ['marker'], main_distinct_id: MARK.person, description: 'attack', condition: { properties: [] },
  };
}

const ERROR_KEYS = ['attr', 'code', 'detail', 'type'];

/** A streaming route (Server-Sent Events) answers and never ends: read its status and first bytes, then hang up. */
const STREAMING = new Set(['flags.stream']);

async function call(caller: Client, route: RouteDef, path: string, body: unknown): Promise<{ status: number; text: string; body: any }> {
  if (!STREAMING.has(route.op)) return caller.request(route.method, path, body);
  const abort = new AbortController();
  const res = await fetch(caller.base + path, { headers: caller.key ? { authorization: `Bearer ${caller.key}` } : {}, signal: abort.signal });
  const reader = res.body!.getReader();
  const first = await reader.read();
  abort.abort();
  const text = first.value ? new TextDecoder().decode(first.value) : '';
  let parsed: any = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* an event stream */
  }
  return { status: res.status, text, body: parsed };
}

/** Has a route a victim resource in its address (its project, organization, an id, or a project token)? */
const targeted = (route: RouteDef): boolean => route.path.includes('/:') || route.projectFrom !== undefined;

type Expect = { status: number[]; code?: string; detail?: string };

async function refused(t: typeof t, caller: Client, route: RouteDef, projectId: number, expect: Expect, marks: string[]): Promise<void> {
  const res = await call(caller, route, pathOf(route, projectId), bodyOf(route));
  const name = `${route.method} ${route.path}`;
  t.ok(expect.status.includes(res.status), `${name}: ${res.status} ${res.text.slice(0, 160)}`);
  t.same(Object.keys(res.body ?? {}).sort(), ERROR_KEYS, `${name}: the error body`);
  if (expect.code) t.equal(res.body?.code, expect.code, `${name}: code`);
  if (expect.detail) t.equal(res.body?.detail, expect.detail, `${name}: detail`);
  for (const mark of marks) t.notOk(res.text.includes(mark), `${name}: no ${mark}`);
}

/** A call allowed to succeed because it addresses only the caller's own things: no victim data may show. */
async function ownOnly(t: typeof t, caller: Client, route: RouteDef, marks: string[]): Promise<void> {
  const res = await call(caller, route, pathOf(route, victim.projectId), bodyOf(route));
  const name = `${route.method} ${route.path}`;
  t.ok(res.status < 500, `${name}: ${res.status}`);
  for (const mark of marks) t.notOk(res.text.includes(mark), `${name}: no ${mark}`);
}

t.test('(a) a key of another organization', async (t) => {
  for (const route of PRIVATE) {
    if (targeted(route)) await refused(t, attacker, route, victim.projectId, { status: [403, 404] }, ALL_MARKS);
    else await ownOnly(t, attacker, route, ALL_MARKS);
  }
});

t.test('(b) a key confined to another project of the same organization', async (t) => {
  for (const route of PRIVATE) {
    const userOwn = route.scope === null || route.scope?.startsWith('user:');
    if (userOwn) {
      await ownOnly(t, confined, route, PROJECT_MARKS);
    } else if (route.path.includes(':project_id') || route.projectFrom !== undefined) {
      await refused(t, confined, route, victim.projectId, { status: [403], code: 'permission_denied', detail: `API key does not have access to the requested project: ID ${victim.projectId}.` }, PROJECT_MARKS);
    } else {
      await refused(t, confined, route, victim.projectId, { status: [403], code: 'permission_denied', detail: 'API keys with scoped projects are only supported on project-based endpoints.' }, ALL_MARKS);
    }
  }
});

t.test('(c) keys without the route\'s scope', async (t) => {
  let checked = 0;
  for (const route of PRIVATE) {
    if (!route.scope) continue; // a key reading itself needs no scope
    const [object, action] = route.scope.split(':') as [string, string];
    const expect = { status: [403], code: 'permission_denied', detail: `API key missing required scope '${route.scope}'` };
    await refused(t, withoutObject.get(object)!, route, victim.projectId, expect, ALL_MARKS);
    if (action === 'write') await refused(t, readOnly.get(object)!, route, victim.projectId, expect, ALL_MARKS);
    checked++;
  }
  t.equal(checked, PRIVATE.filter((r) => r.scope).length);
});

t.test('(d) the project API key as Bearer, (e) no key', async (t) => {
  const invalid = { status: [401], code: 'invalid_personal_api_key', detail: 'Invalid Personal API key.' };
  const none = { status: [401], code: 'not_authenticated', detail: 'Authentication credentials were not provided.' };
  for (const route of PRIVATE) {
    await refused(t, server.api.withKey(victim.token), route, victim.projectId, invalid, ALL_MARKS);
    // Without credentials the flag stream is the browser's stream of a project API key (`?token=`): public by
    // design, and it carries no data ("flags changed" only).
    if (STREAMING.has(route.op)) await ownOnly(t, server.api.withKey(null), route, ALL_MARKS);
    else await refused(t, server.api.withKey(null), route, victim.projectId, none, ALL_MARKS);
  }
});

t.test('positive control: a key holding exactly the declared scope reaches every route\'s resource', async (t) => {
  // Deletions last, dependants first, so every route still finds its resource.
  const rank = (r: RouteDef) => (r.method !== 'DELETE' ? 0 : r.path.includes(':access_id') || r.path.includes(':membership_id') || r.path.includes(':password_id') ? 1 : 2);
  for (const route of [...PRIVATE].sort((a, b) => rank(a) - rank(b))) {
    const caller = exactly.get(route.scope ?? 'none')!;
    const res = await call(caller, route, pathOf(route, victim.projectId), bodyOf(route));
    const name = `${route.method} ${route.path} with only ${route.scope ?? 'no scope'}`;
    // Past authentication and onto the victim's resource: anything but 401/403/404 (a 400 or 405 from the operation
    // itself, e.g. the generic body or a refused hard delete, still proves the call reached it).
    t.ok(![401, 403, 404].includes(res.status) && res.status < 500, `${name}: ${res.status} ${res.text.slice(0, 160)}`);
  }
});

t.test('(f) OFREP with the project API key of another organization\'s project evaluates only that project\'s flags', async (t) => {
  const anonymous = server.api.withKey(null);
  for (const headers of [{ authorization: `Bearer ${attackerToken}` }, { 'x-api-key': attackerToken }]) {
    const bulk = await anonymous.post('/ofrep/v1/evaluate/flags', { context: { targetingKey: MARK.person } }, headers);
    t.equal(bulk.status, 200);
    t.same(bulk.body.flags, [], 'the attacker\'s project has no flags');
    for (const mark of ALL_MARKS) t.notOk(bulk.text.includes(mark), `bulk: no ${mark}`);
    const one = await anonymous.post(`/ofrep/v1/evaluate/flags/${MARK.flag}`, { context: { targetingKey: 'someone' } }, headers);
    t.match(one, { status: 404, body: { errorCode: 'FLAG_NOT_FOUND' } }, 'the victim\'s flag does not exist for it');
    t.notOk('metadata' in one.body || 'value' in one.body, 'nothing of the victim\'s flag but the key it was asked');
  }
  // The victim's own key reaches its flags (the positive control above renamed them): the refusal is the project's.
  const own = await anonymous.post('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'someone' } }, { 'x-api-key': victim.token });
  t.equal(own.status, 200);
  t.ok(own.body.flags.length > 0, 'the victim\'s key evaluates the victim\'s flags');
});
