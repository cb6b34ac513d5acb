// Scope rules (src/domain/scopes.ts) and the rights a new key may ask for (src/domain/key-request.ts).
import t from 'tap';
import { firstUngranted, grants, isValidScope, reachWithin, restrictionWithin } from '../../src/domain/scopes.js';
import { checkKeyReach } from '../../src/domain/key-request.js';

t.test('valid scopes: * or a known object with read|write', async (t) => {
  for (const s of ['*', 'feature_flag:read', 'feature_flag:write', 'person:read', 'query:read', 'personal_api_key:write', 'user:read']) t.ok(isValidScope(s), s);
  for (const s of ['', 'feature_flag', 'feature_flag:admin', 'flag:read', 'feature_flag:read:x', '**', 'FEATURE_FLAG:read', ' feature_flag:read']) t.notOk(isValidScope(s), JSON.stringify(s));
});

t.test('grants: * holds all, write implies read, read does not imply write', async (t) => {
  t.ok(grants(['*'], 'feature_flag:write'));
  t.ok(grants(['feature_flag:write'], 'feature_flag:read'));
  t.ok(grants(['feature_flag:read'], 'feature_flag:read'));
  t.notOk(grants(['feature_flag:read'], 'feature_flag:write'));
  t.notOk(grants(['person:write'], 'feature_flag:read'));
  t.notOk(grants([], 'feature_flag:read'));
});

t.test('a key hands out only rights it holds', async (t) => {
  t.equal(firstUngranted(['feature_flag:read'], ['*']), '*');
  t.equal(firstUngranted(['feature_flag:read'], ['feature_flag:write']), 'feature_flag:write');
  t.equal(firstUngranted(['feature_flag:write'], ['feature_flag:read', 'feature_flag:write']), null);
  t.equal(firstUngranted(['feature_flag:write'], ['feature_flag:read', 'person:read']), 'person:read');
  t.equal(firstUngranted(['*'], ['*']), null);
  t.equal(firstUngranted(['feature_flag:read'], []), null);
});

t.test('restrictions: unrestricted holds every restriction, a restriction holds only subsets', async (t) => {
  t.ok(restrictionWithin(null, null));
  t.ok(restrictionWithin(null, [1]));
  t.ok(restrictionWithin([], [1]));
  t.ok(restrictionWithin([1, 2], [2]));
  t.notOk(restrictionWithin([1], null), 'an unrestricted key reaches more than a restricted one');
  t.notOk(restrictionWithin([1], []));
  t.notOk(restrictionWithin([1], [1, 3]));
  const full = { scopes: ['*'], scopedTeams: null, scopedOrganizations: null };
  const read = { scopes: ['feature_flag:read'], scopedTeams: null, scopedOrganizations: null };
  t.ok(reachWithin(full, read));
  t.notOk(reachWithin(read, full));
  t.notOk(reachWithin({ ...full, scopedTeams: [1] }, full));
});

t.test('key request: scopes, scoped_teams, scoped_organizations checked, omitted fields inherited', async (t) => {
  const org = '0f9a2c1e-6b1d-4c3e-9d2a-7f6e5d4c3b2a';
  const user = { projectIds: new Set([1, 2]), organizationUuid: org };
  const inherited = { scopes: ['feature_flag:write'], scopedTeams: null, scopedOrganizations: null };
  t.same(checkKeyReach({}, user, inherited), { reach: inherited });
  t.same(checkKeyReach({ scopes: ['person:read', 'person:read'], scoped_teams: [2], scoped_organizations: [org.toUpperCase()] }, user, inherited),
    { reach: { scopes: ['person:read'], scopedTeams: [2], scopedOrganizations: [org] } });
  t.same(checkKeyReach({ scopes: ['nope:read'] }, user, inherited), { problem: { attr: 'scopes', code: 'invalid_input', detail: 'Invalid scope: nope:read' } });
  t.same(checkKeyReach({ scopes: 'feature_flag:read' }, user, inherited), { problem: { attr: 'scopes', code: 'not_a_list', detail: 'Expected a list of items but got type "str".' } });
  t.same(checkKeyReach({ scopes: [1] }, user, inherited), { problem: { attr: 'scopes__0', code: 'invalid_input', detail: 'Not a valid string.' } });
  t.same(checkKeyReach({ scoped_teams: [3] }, user, inherited), { problem: { attr: 'scoped_teams', code: 'invalid_input', detail: 'You must be a member of all teams that you are scoping the key to.' } });
  t.same(checkKeyReach({ scoped_teams: ['x'] }, user, inherited), { problem: { attr: 'scoped_teams__0', code: 'invalid_input', detail: 'A valid integer is required.' } });
  t.same(checkKeyReach({ scoped_organizations: ['not-a-uuid'] }, user, inherited), { problem: { attr: 'scoped_organizations', code: 'invalid_input', detail: 'Invalid organization UUID' } });
  t.same(checkKeyReach({ scoped_organizations: ['11111111-1111-1111-1111-111111111111'] }, user, inherited),
    { problem: { attr: 'scoped_organizations', code: 'invalid_input', detail: 'You must be a member of all organizations that you are scoping the key to.' } });
  t.same(checkKeyReach({ scoped_teams: [] }, user, { ...inherited, scopedTeams: [1] }), { reach: { ...inherited, scopedTeams: null } }, 'an empty list asks for no restriction');
});
