/**
 * Personal API key scopes, as PostHog defines them: a key carries `*` (full access) or a list of
 * `<object>:read|write`; `write` implies `read`. Every private route names the scope it needs
 * (src/front/routes.ts) and the front checks it before anything else runs (src/front/auth-cache.ts).
 *
 * Only the scope objects that guard a Quill route are accepted when a key is created (an unknown one is a 400):
 * a scope that guards nothing would look like a right the key has not got.
 */
export const SCOPE_OBJECTS = [
  'feature_flag',
  'person',
  'cohort',
  'experiment',
  'action',
  'annotation',
  /** PostHog's scope for the query and stored-events endpoints. */
  'query',
  'event_definition',
  'property_definition',
  'insight',
  'dashboard',
  /** Share links of dashboards, insights and the web analytics page (PostHog's scope object). */
  'sharing_configuration',
  'session_recording',
  /** Insight alerts and subscriptions (PostHog's scope objects). */
  'alert',
  'subscription',
  'organization',
  'organization_member',
  'project',
  'personal_api_key',
  'user',
] as const;

export type ScopeObject = (typeof SCOPE_OBJECTS)[number];
export type ScopeAction = 'read' | 'write';
export type RequiredScope = `${ScopeObject}:${ScopeAction}`;

export const FULL_ACCESS = '*';

const OBJECTS: ReadonlySet<string> = new Set(SCOPE_OBJECTS);

/** True for `*` and for `<known object>:read|write`. */
export function isValidScope(scope: string): boolean {
  if (scope === FULL_ACCESS) return true;
  const parts = scope.split(':');
  return parts.length === 2 && OBJECTS.has(parts[0]!) && (parts[1] === 'read' || parts[1] === 'write');
}

/** Does a key with `scopes` hold `required`? `*` holds everything, `x:write` also holds `x:read`. */
export function grants(scopes: readonly string[], required: string): boolean {
  if (scopes.includes(FULL_ACCESS) || scopes.includes(required)) return true;
  return required.endsWith(':read') && scopes.includes(`${required.slice(0, -'read'.length)}write`);
}

/** The first scope of `wanted` that `held` does not grant (a key may only hand out rights it has), or null. */
export function firstUngranted(held: readonly string[], wanted: readonly string[]): string | null {
  for (const scope of wanted) {
    if (scope === FULL_ACCESS ? !held.includes(FULL_ACCESS) : !grants(held, scope)) return scope;
  }
  return null;
}

/**
 * A restriction to a set of ids (projects or organizations); null means none. `inner` is within `outer` when
 * `outer` is unrestricted, or `inner` is restricted to a non-empty subset of `outer`.
 */
export function restrictionWithin(outer: readonly (number | string)[] | null, inner: readonly (number | string)[] | null): boolean {
  if (!outer || outer.length === 0) return true;
  if (!inner || inner.length === 0) return false;
  return inner.every((id) => outer.includes(id));
}

/** The rights a key has: its scopes and the projects / organizations it is confined to (null: not confined). */
export interface KeyReach {
  scopes: readonly string[];
  scopedTeams: readonly number[] | null;
  scopedOrganizations: readonly string[] | null;
}

/** Is every right of `inner` also a right of `outer`? (What a key may see, create or delete among its user's keys.) */
export function reachWithin(outer: KeyReach, inner: KeyReach): boolean {
  return firstUngranted(outer.scopes, inner.scopes) === null
    && restrictionWithin(outer.scopedTeams, inner.scopedTeams)
    && restrictionWithin(outer.scopedOrganizations, inner.scopedOrganizations);
}
