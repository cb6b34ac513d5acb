// The feature-flag management API: fields, validation, soft delete, refused hard delete, versions, pagination,
// activity log, role access and edit permissions.
import t from 'tap';
import { Client, quillForFile } from '../helpers/quill.js';

const FF = '/api/projects/@current/feature_flags/';
const server = quillForFile(t);

t.test('create returns every field of the seed table plus derived fields', async (t) => {
  const res = await server.api.post(FF, { key: 'simple', name: 'A simple flag', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
  t.equal(res.status, 201);
  t.match(res.body, {
    id: Number, name: 'A simple flag', key: 'simple', deleted: false, active: true,
    created_by: { id: Number, uuid: String, distinct_id: String, first_name: 'Admin', email: 'admin@quill.local' },
    created_at: String, is_simple_flag: true, rollout_percentage: 50, ensure_experience_continuity: false,
    experiment_set: [], rollback_conditions: null, performed_rollback: false, can_edit: true, version: 1,
  });
  t.same(res.body.filters, { groups: [{ properties: [], rollout_percentage: 50 }] });
  const complex = await server.api.post(FF, {
    key: 'complex', filters: { groups: [{ properties: [{ key: 'email', value: 'x', operator: 'icontains', type: 'person' }], rollout_percentage: 20 }] },
  });
  t.equal(complex.body.is_simple_flag, false);
  t.equal(complex.body.rollout_percentage, null);
  const group = await server.api.post(FF, { key: 'grouped', filters: { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 10 }] } });
  t.equal(group.status, 201);
  t.equal(group.body.is_simple_flag, false, 'group flags are never simple');
  const got = await server.api.get(`${FF}${res.body.id}/`);
  t.same(got.body, res.body, 'retrieve returns the same record');
});

t.test('key validation: required, pattern, unique among non-deleted', async (t) => {
  const missing = await server.api.post(FF, { name: 'no key' });
  t.equal(missing.status, 400);
  t.same(missing.body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'key' });
  const bad = await server.api.post(FF, { key: 'has space' });
  t.equal(bad.status, 400);
  t.same(bad.body, { type: 'validation_error', code: 'invalid_key', detail: 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.', attr: 'key' });
  await server.api.post(FF, { key: 'taken' });
  const dup = await server.api.post(FF, { key: 'taken' });
  t.equal(dup.status, 400);
  t.same(dup.body, { type: 'validation_error', code: 'unique', detail: 'There is already a feature flag with this key.', attr: 'key' });
  const wrongType = await server.api.post(FF, { key: 'typed', active: 'yes' });
  t.equal(wrongType.status, 400);
  t.same(wrongType.body, { type: 'validation_error', code: 'invalid_input', detail: 'Must be a valid boolean.', attr: 'active' });
});

t.test('filters validation', async (t) => {
  const variants = (a: number, b: number) => ({ variants: [{ key: 'a', rollout_percentage: a }, { key: 'b', rollout_percentage: b }] });
  const sum = await server.api.post(FF, { key: 'mv-bad', filters: { groups: [{ properties: [] }], multivariate: variants(50, 40) } });
  t.equal(sum.status, 400);
  t.equal(sum.body.type, 'validation_error');
  t.equal(sum.body.attr, 'filters');
  t.match(sum.body.detail, /100/);
  t.equal((await server.api.post(FF, { key: 'mv-ok', filters: { groups: [{ properties: [] }], multivariate: variants(50, 50) } })).status, 201);
  const override = await server.api.post(FF, { key: 'mv-override', filters: { groups: [{ properties: [], variant: 'c' }], multivariate: variants(50, 50) } });
  t.equal(override.status, 400, 'a variant override must name a variant');
  const payload = await server.api.post(FF, { key: 'bool-payload', filters: { groups: [{ properties: [] }], payloads: { a: '{"x":1}' } } });
  t.equal(payload.status, 400, 'boolean flags only take a "true" payload');
  t.equal((await server.api.post(FF, { key: 'bool-payload-ok', filters: { groups: [{ properties: [] }], payloads: { true: '{"x":1}' } } })).status, 201);
  const op = await server.api.post(FF, { key: 'bad-op', filters: { groups: [{ properties: [{ key: 'a', value: 'b', operator: 'sorta', type: 'person' }] }] } });
  t.equal(op.status, 400, 'unknown property operators are rejected');
  t.equal(op.body.attr, 'filters');
});

t.test('PATCH bumps version, soft delete frees the key, DELETE is refused', async (t) => {
  const created = await server.api.post(FF, { key: 'lifecycle', filters: { groups: [{ rollout_percentage: 10 }] } });
  const id = created.body.id;
  const p1 = await server.api.patch(`${FF}${id}/`, { name: 'renamed', active: false });
  t.equal(p1.status, 200);
  t.match(p1.body, { name: 'renamed', active: false, version: 2 });
  const same = await server.api.patch(`${FF}${id}/`, { name: 'renamed' });
  t.equal(same.body.version, 2, 'no change, no new version');
  const p2 = await server.api.patch(`${FF}${id}/`, { filters: { groups: [{ properties: [], rollout_percentage: 90 }] } });
  t.match(p2.body, { version: 3, rollout_percentage: 90 });

  const del = await server.api.delete(`${FF}${id}/`);
  t.equal(del.status, 405);
  t.match(del.body, { type: 'invalid_request', code: 'method_not_allowed', detail: /PATCH.*"deleted": true/ });
  t.equal((await server.api.get(`${FF}${id}/`)).body.deleted, false, 'DELETE leaves the flag unchanged');
  t.equal((await server.api.delete(`${FF}999999/`)).status, 404);

  const soft = await server.api.patch(`${FF}${id}/`, { deleted: true });
  t.match(soft.body, { deleted: true, version: 4 });
  const list = await server.api.get(FF);
  t.notOk(list.body.results.some((f: { id: number }) => f.id === id), 'deleted flags are not listed');
  t.equal((await server.api.get(`${FF}${id}/`)).body.deleted, true, 'but can still be retrieved');
  const reused = await server.api.post(FF, { key: 'lifecycle' });
  t.equal(reused.status, 201, 'the key of a soft-deleted flag can be reused');
  t.equal((await server.api.patch(`${FF}${id}/`, { active: 'nope' })).status, 400);
  t.equal((await server.api.patch(`${FF}abc/`, { active: true })).status, 404);
});

t.test('list: non-deleted, newest first, limit/offset with absolute next/previous', async (t) => {
  const other = await server.api.post('/api/projects/', { name: 'Pagination' });
  const base = `/api/projects/${other.body.id}/feature_flags/`;
  for (let i = 0; i < 5; i++) await server.api.post(base, { key: `page-${i}` });
  const page = await server.api.get(`${base}?limit=2&offset=2&search=page`);
  t.equal(page.body.count, 5);
  t.same(page.body.results.map((f: { key: string }) => f.key), ['page-2', 'page-1']);
  t.equal(page.body.next, `${server.q.base}${base}?limit=2&offset=4&search=page`);
  t.equal(page.body.previous, `${server.q.base}${base}?limit=2&search=page`);
  const first = await server.api.get(`${base}?limit=2`);
  t.same(first.body.results.map((f: { key: string }) => f.key), ['page-4', 'page-3']);
  t.equal(first.body.previous, null);
  t.equal(first.body.next, `${server.q.base}${base}?limit=2&offset=2`);
  const last = await server.api.get(`${base}?limit=2&offset=4`);
  t.equal(last.body.next, null);
  const dflt = await server.api.get(`${base}?limit=-3&offset=x`);
  t.equal(dflt.body.results.length, 5, 'invalid limit/offset fall back to defaults');
});

t.test('activity log: created, updated with field changes, deleted; newest first; paginated', async (t) => {
  const created = await server.api.post(FF, { key: 'audited', name: 'v1' });
  const id = created.body.id;
  await server.api.patch(`${FF}${id}/`, { name: 'v2', filters: { groups: [{ properties: [], rollout_percentage: 5 }] } });
  await server.api.patch(`${FF}${id}/`, { deleted: true });
  const log = await server.api.get(`${FF}${id}/activity/`);
  t.equal(log.status, 200);
  t.equal(log.body.total_count, 3);
  t.same(log.body.results.map((e: { activity: string }) => e.activity), ['deleted', 'updated', 'created']);
  const updated = log.body.results[1];
  t.match(updated, { scope: 'FeatureFlag', item_id: String(id), user: { first_name: 'Admin', email: 'admin@quill.local' } });
  t.same(updated.detail.changes.map((c: { field: string }) => c.field).sort(), ['filters', 'name']);
  t.match(updated.detail.changes.find((c: { field: string }) => c.field === 'name'), { type: 'FeatureFlag', action: 'changed', before: 'v1', after: 'v2' });
  t.match(log.body.results[0].detail.changes, [{ field: 'deleted', before: false, after: true }]);
  const paged = await server.api.get(`${FF}${id}/activity/?limit=2`);
  t.equal(paged.body.results.length, 2);
  t.match(paged.body.next, /page=2/);
  const all = await server.api.get(`${FF}activity/`);
  t.ok(all.body.total_count >= 3);
  t.ok(all.body.results.some((e: { item_id: string }) => e.item_id === String(id)));
  t.equal((await server.api.get(`${FF}424242/activity/`)).status, 404);
});

t.test('role access and edit permissions', async (t) => {
  const roles = '/api/organizations/@current/roles/';
  const member = await server.api.post('/api/organizations/@current/members/', { email: 'viewer@example.com', first_name: 'Vera' });
  t.equal(member.status, 201);
  const vera = new Client(server.q.base, member.body.personal_api_key);
  const flag = await server.api.post(FF, { key: 'guarded' });
  const flagId = flag.body.id;

  // Organization default "can always edit": members may edit.
  t.equal((await vera.patch(`${FF}${flagId}/`, { name: 'by vera' })).status, 200);
  // Switch the organization to "view only".
  t.equal((await server.api.patch('/api/organizations/@current/', { feature_flags_access_level: 21 })).status, 200);
  const denied = await vera.patch(`${FF}${flagId}/`, { name: 'again' });
  t.equal(denied.status, 403);
  t.same(denied.body, { type: 'authentication_error', code: 'permission_denied', detail: "You don't have edit permissions for this feature flag.", attr: null });
  t.equal((await vera.get(`${FF}${flagId}/`)).body.can_edit, false);

  const viewers = await server.api.post(roles, { name: 'Viewers', feature_flags_access_level: 21 });
  t.equal((await server.api.post(`${roles}${viewers.body.id}/role_memberships/`, { user_uuid: member.body.user.uuid })).status, 201);
  const ra = `${FF}${flagId}/role_access/`;
  const deniedRoles = await vera.post(ra, { role_id: viewers.body.id });
  t.equal(deniedRoles.status, 403);
  t.equal(deniedRoles.body.detail, "You can't edit roles for this feature flag.");

  const access = await server.api.post(ra, { role_id: viewers.body.id });
  t.equal(access.status, 201);
  t.match(access.body, { id: Number, role_id: viewers.body.id, added_at: String, updated_at: String, feature_flag: { id: flagId, key: 'guarded' }, role: { id: viewers.body.id, name: 'Viewers' } });
  t.equal((await vera.patch(`${FF}${flagId}/`, { name: 'granted' })).status, 200, 'a role with access may edit this flag');
  t.equal((await vera.get(`${FF}${flagId}/`)).body.can_edit, true);
  const role = await server.api.get(`${roles}${viewers.body.id}/`);
  t.same(role.body.associated_flags, [{ id: flagId, key: 'guarded' }]);
  t.equal(role.body.members[0].user.email, 'viewer@example.com');

  const dup = await server.api.post(ra, { role_id: viewers.body.id });
  t.equal(dup.status, 400);
  t.equal(dup.body.code, 'unique');
  t.equal((await server.api.post(ra, { role_id: '00000000-0000-0000-0000-000000000000' })).status, 404, 'unknown role');
  t.equal((await server.api.post(`${FF}987654/role_access/`, { role_id: viewers.body.id })).status, 404, 'unknown flag');
  t.equal((await server.api.post(ra, {})).status, 400, 'role_id is required');

  const list = await server.api.get(ra);
  t.equal(list.body.count, 1);
  t.equal((await server.api.get(`${ra}${access.body.id}/`)).body.id, access.body.id);
  t.equal((await server.api.delete(`${ra}${access.body.id}/`)).status, 204);
  t.equal((await server.api.get(`${ra}${access.body.id}/`)).status, 404);
  t.equal((await vera.patch(`${FF}${flagId}/`, { name: 'revoked' })).status, 403, 'access removed');

  // A role with "can always edit" lifts the restriction for every flag.
  const editors = await server.api.post(roles, { name: 'Editors', feature_flags_access_level: 37 });
  await server.api.post(`${roles}${editors.body.id}/role_memberships/`, { user_uuid: member.body.user.uuid });
  t.equal((await vera.patch(`${FF}${flagId}/`, { name: 'editor' })).status, 200);
  await server.api.patch('/api/organizations/@current/', { feature_flags_access_level: 37 });
});

t.test('is_remote_configuration: stored, validated, returned, logged; the remote_config endpoint answers as PostHog', async (t) => {
  const plain = await server.api.post(FF, { key: 'rc-plain', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"x":1}' } } });
  t.match(plain.body, { is_remote_configuration: false, has_encrypted_payloads: false }, 'false unless set');
  const rc = await server.api.post(FF, {
    key: 'rc-theme', is_remote_configuration: true,
    filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"theme": "dark"}' } },
  });
  t.equal(rc.status, 201);
  t.equal(rc.body.is_remote_configuration, true);
  t.equal((await server.api.get(`${FF}${rc.body.id}/`)).body.is_remote_configuration, true, 'stored');
  const bad = await server.api.post(FF, { key: 'rc-bad', is_remote_configuration: 'yes' });
  t.equal(bad.status, 400);
  t.match(bad.body, { type: 'validation_error', attr: 'is_remote_configuration' });

  // 200 with the stored payload text as a JSON string (posthog-node parses it), by key or by id.
  const byKey = await server.api.get(`${FF}rc-theme/remote_config/`);
  t.equal(byKey.status, 200);
  t.equal(byKey.text, JSON.stringify('{"theme": "dark"}'));
  t.equal((await server.api.get(`${FF}${rc.body.id}/remote_config`)).text, byKey.text, 'by id, without the trailing slash');
  // A flag that is not a remote configuration, an unknown one, a deleted one: 404 with no body, as PostHog.
  for (const ref of ['rc-plain', String(plain.body.id), 'rc-none', '987654']) {
    const res = await server.api.get(`${FF}${ref}/remote_config/`);
    t.same({ status: res.status, text: res.text }, { status: 404, text: '' }, `${ref}: bare 404`);
  }
  const patched = await server.api.patch(`${FF}${plain.body.id}/`, { is_remote_configuration: true });
  t.equal(patched.body.is_remote_configuration, true);
  t.equal((await server.api.get(`${FF}rc-plain/remote_config/`)).text, JSON.stringify('{"x":1}'), 'PATCH turns it on');
  const activity = await server.api.get(`${FF}${plain.body.id}/activity/`);
  t.match(activity.body.results[0].detail.changes, [{ field: 'is_remote_configuration', before: false, after: true }]);
  await server.api.patch(`${FF}${plain.body.id}/`, { deleted: true });
  t.equal((await server.api.get(`${FF}rc-plain/remote_config/`)).status, 404, 'a deleted flag has no remote config');

  // Personal key required; ?token= picks the project, within the key's organization; another project's flag id is not found.
  t.equal((await server.api.withKey(null).get(`${FF}rc-theme/remote_config/`)).status, 401);
  const other = await server.api.post('/api/projects/', { name: 'Remote config elsewhere' });
  const otherFlag = await server.api.post(`/api/projects/${other.body.id}/feature_flags/`, {
    key: 'rc-theme', is_remote_configuration: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '"other"' } },
  });
  t.equal((await server.api.get(`${FF}rc-theme/remote_config/?token=${other.body.api_token}`)).text, JSON.stringify('"other"'), 'token picks the project');
  t.equal((await server.api.get(`${FF}${otherFlag.body.id}/remote_config/`)).status, 404, "another project's flag id");
  t.equal((await server.api.get(`${FF}rc-theme/remote_config/?token=phc_unknown`)).status, 401, 'unknown project token');
  const org = await server.api.post('/api/organizations/', { name: 'Remote config org', email: 'rc@example.com' });
  const ourToken: string = (await server.api.get('/api/users/@me/')).body.team.api_token;
  const foreign = await server.api.withKey(org.body.personal_api_key).get(`/api/projects/@current/feature_flags/rc-theme/remote_config/?token=${ourToken}`);
  t.equal(foreign.status, 403, "another organization's key cannot read this project's remote config");
});
