/**
 * Private-API authentication and authorisation without I/O, in one place: the front keeps digests of personal
 * API keys (with their scopes and the projects / organizations they are confined to), users and projects in
 * memory, refreshed from a worker whenever an operation reports `authChanged`, and resolves every private request
 * against the route's declared scope (src/front/routes.ts) before a worker sees it.
 *
 * A request without a key may carry the console's session cookie (src/worker/ops/sessions.ts): sessions are in the
 * same snapshot, and a session has the full rights of its user within their organization. A state-changing request
 * authenticated by the cookie must echo the session's CSRF token in `X-CSRFToken` (a key-authenticated one need
 * not: a browser never attaches a key by itself).
 *
 * A key the cache does not know may have been minted by `quill create-key` in another process (src/cli): the
 * front then asks a worker for that one key (`resolve` answers `{ miss }`), learns it, and resolves again.
 */
import { timingSafeEqual } from 'node:crypto';
import { keyDigest } from '../domain/secrets.js';
import { grants } from '../domain/scopes.js';
import { cookieValue, isSafeMethod, SESSION_COOKIE } from '../domain/cookies.js';
import { Errors } from '../protocol/errors.js';
import type { AuthKey, AuthKeyLookup, AuthSession, AuthSnapshot, AuthUser, Principal } from '../protocol/worker-messages.js';

export interface KeySources {
  authorization: string;
  body: unknown;
  query: Record<string, string>;
  /** The `Cookie` header (the console's session), '' when absent. */
  cookie?: string;
  /** The `X-CSRFToken` header. */
  csrf?: string;
  method?: string;
  /** Epoch ms (sessions expire). */
  now?: number;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What a route asks of its caller (the fields of a route-table entry that concern authentication). */
export interface RouteAuth {
  scope?: string | null;
  projectFrom?: 'token' | 'token-or-path';
  operator?: true;
}

export type Resolution = { principal: Principal } | { miss: string };

export class AuthCache {
  private keys = new Map<string, AuthKey>();
  private sessions = new Map<string, AuthSession>();
  private users = new Map<number, AuthUser>();
  private projects = new Map<number, { organizationId: number; token: string }>();
  private projectsByToken = new Map<string, number>();
  private organizationUuids = new Map<number, string>();
  /** Bumped by every `replace`: a key looked up before a replace may since have been deleted. */
  private generation = 0;
  private readonly operatorDigest: string | null;

  /**
   * `keyUsed` hears of every request a stored personal key authenticated (its digest and the request's time), before
   * the route's checks: PostHog's `last_used_at` counts a use the key's scopes then refuse (src/front/key-usage.ts).
   */
  constructor(snapshot: AuthSnapshot, operatorKey: string | null = null, private readonly keyUsed: ((digest: string, now: number) => void) | null = null) {
    this.operatorDigest = operatorKey ? keyDigest(operatorKey) : null;
    this.replace(snapshot);
  }

  replace(snapshot: AuthSnapshot): void {
    this.generation++;
    this.keys = new Map(snapshot.keys.map((k) => [k.digest, k]));
    this.sessions = new Map(snapshot.sessions.map((x) => [x.digest, x]));
    this.users = new Map(snapshot.users.map((u) => [u.id, u]));
    this.projects = new Map(snapshot.projects.map((p) => [p.id, { organizationId: p.organizationId, token: p.token }]));
    this.projectsByToken = new Map(snapshot.projects.map((p) => [p.token, p.id]));
    this.organizationUuids = new Map(snapshot.organizations.map((o) => [o.id, o.uuid]));
  }

  get version(): number {
    return this.generation;
  }

  /** Adds a key a worker read afresh, unless the cache was replaced since the lookup began (it may be deleted). */
  learn(found: AuthKeyLookup, version: number): void {
    if (!found || version !== this.generation) return;
    this.keys.set(found.key.digest, found.key);
    if (!this.users.has(found.user.id)) this.users.set(found.user.id, found.user);
  }

  /** PostHog's lookup order: `Authorization: Bearer`, then body `personal_api_key`, then the query string. */
  static keyOf(src: KeySources): string | null {
    const header = src.authorization.trim();
    if (header) {
      const m = /^Bearer\s+(.+)$/i.exec(header);
      if (m) return m[1]!.trim();
    }
    const body = src.body;
    if (body && typeof body === 'object' && typeof (body as Record<string, unknown>).personal_api_key === 'string') {
      return (body as Record<string, string>).personal_api_key!;
    }
    return src.query.personal_api_key || null;
  }

  /**
   * Resolves the caller of a private route and the project it names, and checks that the key may make this call:
   * its organization, its projects, the route's scope. Throws the documented 401/403/404 errors; `{ miss }` when
   * the key is not in the cache (the caller may look it up once, then must treat it as invalid).
   */
  resolve(src: KeySources, route: RouteAuth, params: Record<string, string>): Resolution {
    const key = AuthCache.keyOf(src);
    if (!key) return this.resolveSession(src, route, params);
    const digest = keyDigest(key);
    if (route.operator && this.operatorDigest !== null && digest === this.operatorDigest) {
      return { principal: { userId: 0, organizationId: 0, projectId: null, keyDigest: null, operator: true, sessionDigest: null } };
    }
    const entry = this.keys.get(digest);
    if (!entry) return { miss: digest };
    const user = this.users.get(entry.userId);
    if (!user) throw Errors.invalidPersonalApiKey();
    this.keyUsed?.(digest, src.now ?? Date.now());
    const orgUuid = this.organizationUuids.get(user.organizationId) ?? '';
    const userScopeOnly = route.scope?.startsWith('user:') === true;

    // PostHog exempts the user's own profile from the key's organization and project confinement.
    if (!userScopeOnly && entry.scopedOrganizations?.length && !entry.scopedOrganizations.includes(orgUuid)) {
      throw Errors.organizationOutsideKey(orgUuid);
    }
    const projectId = this.targetOf(src, route, params, user);

    if (entry.scopedTeams?.length && route.scope !== null && !userScopeOnly) {
      if (projectId === null) throw Errors.keyConfinedToProjects();
      if (!entry.scopedTeams.includes(projectId)) throw Errors.projectOutsideKey(projectId);
    }
    if (route.scope && !grants(entry.scopes, route.scope)) throw Errors.missingScope(route.scope);
    return { principal: { userId: user.id, organizationId: user.organizationId, projectId, keyDigest: digest, operator: false, sessionDigest: null } };
  }

  /** No key: the console's session cookie, with the CSRF token on anything but a read. */
  private resolveSession(src: KeySources, route: RouteAuth, params: Record<string, string>): Resolution {
    const token = cookieValue(src.cookie ?? '', SESSION_COOKIE);
    if (!token) throw Errors.notAuthenticated();
    const digest = keyDigest(token);
    const session = this.sessions.get(digest);
    if (!session || session.expiresAt <= (src.now ?? Date.now())) throw Errors.sessionExpired();
    if (!isSafeMethod(src.method ?? 'GET') && !(src.csrf && sameText(src.csrf, session.csrf))) throw Errors.csrfFailed();
    const user = this.users.get(session.userId);
    if (!user) throw Errors.sessionExpired();
    const projectId = this.targetOf(src, route, params, user);
    return { principal: { userId: user.id, organizationId: user.organizationId, projectId, keyDigest: null, operator: false, sessionDigest: digest } };
  }

  /** The organization (`:organization_id`, which must be the user's) and project a call addresses. */
  private targetOf(src: KeySources, route: RouteAuth, params: Record<string, string>, user: AuthUser): number | null {
    const orgParam = params.organization_id;
    if (orgParam !== undefined && orgParam !== '@current' && orgParam !== String(user.organizationId) && orgParam !== this.organizationUuids.get(user.organizationId)) {
      throw Errors.notFound('Organization not found.');
    }
    const fromToken = route.projectFrom === 'token' || (route.projectFrom === 'token-or-path' && (src.query.token ?? src.query.api_key) !== undefined);
    return fromToken
      ? this.projectOfToken(src.query, user)
      : this.projectOfPath(route.projectFrom === 'token-or-path' ? params.project_id ?? '@current' : params.project_id, user);
  }

  /** `:project_id`: the numeric id or `@current` (the user's current project); null when the path has none. */
  private projectOfPath(param: string | undefined, user: AuthUser): number | null {
    if (param === undefined) return null;
    let projectId: number;
    if (param === '@current') {
      if (user.currentProjectId === null) throw Errors.notFound('Project not found.');
      projectId = user.currentProjectId;
    } else if (/^\d+$/.test(param)) {
      projectId = Number(param);
    } else {
      throw Errors.notFound('Project not found.');
    }
    const project = this.projects.get(projectId);
    if (!project) throw Errors.notFound('Project not found.');
    if (project.organizationId !== user.organizationId) throw Errors.permissionDenied("You don't have access to the project.");
    return projectId;
  }

  /** `?token=` (or `api_key`): the project API key names the project of the local-evaluation definitions. */
  private projectOfToken(query: Record<string, string>, user: AuthUser): number {
    const token = query.token ?? query.api_key;
    if (!token) throw Errors.missingApiKey();
    const projectId = this.projectsByToken.get(token);
    if (projectId === undefined) throw Errors.invalidApiKey();
    if (this.projects.get(projectId)!.organizationId !== user.organizationId) throw Errors.permissionDenied("You don't have access to the project.");
    return projectId;
  }
}
