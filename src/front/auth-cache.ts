/**
 * Private-API authentication without I/O: the front keeps digests of personal API keys, users and projects in
 * memory (refreshed from a worker whenever an operation reports `authChanged`).
 */
import { keyDigest } from '../domain/secrets.js';
import { Errors } from '../protocol/errors.js';
import type { AuthSnapshot, Principal } from '../protocol/worker-messages.js';

export interface KeySources {
  authorization: string;
  body: unknown;
  query: Record<string, string>;
}

export class AuthCache {
  private keys = new Map<string, number>();
  private users = new Map<number, { organizationId: number; currentProjectId: number | null }>();
  private projects = new Map<number, number>();

  constructor(snapshot: AuthSnapshot) {
    this.replace(snapshot);
  }

  replace(snapshot: AuthSnapshot): void {
    this.keys = new Map(snapshot.keys.map((k) => [k.digest, k.userId]));
    this.users = new Map(snapshot.users.map((u) => [u.id, { organizationId: u.organizationId, currentProjectId: u.currentProjectId }]));
    this.projects = new Map(snapshot.projects.map((p) => [p.id, p.organizationId]));
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
   * Resolves the caller and, for project-scoped paths, the project (`@current` = the user's current project).
   * Throws the documented 401/403/404 errors.
   */
  principal(src: KeySources, projectParam: string | null): Principal {
    const key = AuthCache.keyOf(src);
    if (!key) throw Errors.notAuthenticated();
    const userId = this.keys.get(keyDigest(key));
    const user = userId === undefined ? undefined : this.users.get(userId);
    if (userId === undefined || !user) throw Errors.invalidPersonalApiKey();
    const principal: Principal = { userId, organizationId: user.organizationId, projectId: null };
    if (projectParam === null) return principal;
    let projectId: number;
    if (projectParam === '@current') {
      if (user.currentProjectId === null) throw Errors.notFound('Project not found.');
      projectId = user.currentProjectId;
    } else if (/^\d+$/.test(projectParam)) {
      projectId = Number(projectParam);
    } else {
      throw Errors.notFound('Project not found.');
    }
    const org = this.projects.get(projectId);
    if (org === undefined) throw Errors.notFound('Project not found.');
    if (org !== user.organizationId) throw Errors.permissionDenied("You don't have access to the project.");
    principal.projectId = projectId;
    return principal;
  }

  /** The organization of a project, for public endpoints authorised by a personal key (local evaluation). */
  hasProject(projectId: number): boolean {
    return this.projects.has(projectId);
  }
}
