/**
 * Authenticating public requests (capture, flags) by the project token found in them (ingestion-and-api.md §1.4:
 * Django's database check, as the seed's error table describes). A personal API key is accepted in place of the
 * token when the request also names `project_id` and the key's user belongs to that project's organization. As in
 * PostHog, no scope is asked for on this path, but a key confined to some projects (`scoped_teams`) or to an
 * organization reaches only those.
 */
import type { Project } from '../../domain/model.js';
import { keyDigest } from '../../domain/secrets.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { WorkerRuntime } from '../runtime.js';

export function projectForToken(rt: WorkerRuntime, token: string | null, projectId: unknown, missing: () => ApiError = Errors.missingApiKey): Project {
  if (!token) throw missing();
  const project = rt.cache.projectByToken(token);
  if (project) return project;
  if (projectId === undefined || projectId === null || projectId === '') throw Errors.invalidApiKey();
  const id = typeof projectId === 'number' ? projectId : /^\d+$/.test(String(projectId)) ? Number(projectId) : NaN;
  if (!Number.isSafeInteger(id)) throw Errors.invalidProject();
  const key = rt.meta.personalKeys.get(keyDigest(token));
  const user = key ? rt.meta.users.get(key.user_id) : undefined;
  const target = rt.cache.project(id);
  if (!user || !target || target.organization_id !== user.organization_id) throw Errors.invalidPersonalApiKey();
  if (key!.scoped_teams?.length && !key!.scoped_teams.includes(target.id)) throw Errors.projectOutsideKey(target.id);
  const orgUuid = rt.meta.organizations.get(target.organization_id)?.uuid ?? '';
  if (key!.scoped_organizations?.length && !key!.scoped_organizations.includes(orgUuid)) throw Errors.organizationOutsideKey(orgUuid);
  return target;
}
