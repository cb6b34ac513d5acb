/**
 * Local-evaluation definitions for server SDKs (flags.md §6): `GET /flags/definitions?token=…&send_cohorts`
 * (posthog-node 5.x), `GET /api/feature_flag/local_evaluation?token=…` (older SDKs) and
 * `GET /api/projects/:id/feature_flags/local_evaluation/`, all authorised by a personal API key.
 *
 * The body is built once per flag-set revision and served with a strong ETag (a digest of the body), so an SDK
 * polling with `If-None-Match` gets `304` until a flag, cohort or group type changes.
 */
import { createHash } from 'node:crypto';
import { buildLocalEvaluationPayload } from '../../domain/flags/index.js';
import type { Project } from '../../domain/model.js';
import { Errors } from '../../protocol/errors.js';
import type { Reply, TaskItem } from '../../protocol/worker-messages.js';
import type { WorkerRuntime } from '../runtime.js';
import { principalOf, type OpHandler } from './types.js';

interface Definitions {
  body: string;
  etag: string;
}

function definitionsOf(rt: WorkerRuntime, project: Project, sendCohorts: boolean): Definitions {
  return rt.cache.memo(project.id, sendCohorts ? 'definitions+cohorts' : 'definitions', () => {
    const flags = rt.meta.flagsOf(project.id).map((f) => ({ ...f, evaluation_contexts: null }));
    const payload = buildLocalEvaluationPayload(flags, rt.meta.cohortsOf(project.id), rt.cache.groupTypeMapping(project.id), project.id, { sendCohorts });
    const body = JSON.stringify(payload);
    return { body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` };
  });
}

function answer(item: TaskItem, defs: Definitions): Reply {
  const tags = item.meta.ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (tags.includes(defs.etag) || tags.includes('*')) return { status: 304, body: '', headers: { ETag: defs.etag } };
  return { status: 200, body: defs.body, contentType: 'application/json', headers: { ETag: defs.etag, 'Cache-Control': 'no-cache' } };
}

/** `?token=` names the project; the personal key's user must belong to its organization. */
export function projectFromToken(item: TaskItem, rt: WorkerRuntime): Project {
  const token = item.meta.query.token ?? item.meta.query.api_key;
  if (!token) throw Errors.missingApiKey();
  const project = rt.cache.projectByToken(token);
  if (!project) throw Errors.invalidApiKey();
  if (project.organization_id !== principalOf(item).organizationId) throw Errors.permissionDenied("You don't have access to the project.");
  return project;
}

const wantsCohorts = (item: TaskItem): boolean => 'send_cohorts' in item.meta.query && item.meta.query.send_cohorts !== 'false';

/** `/flags/definitions` always sends cohorts (as the Rust service does); the older path only when asked. */
export const flagDefinitions: OpHandler = (item, rt) => answer(item, definitionsOf(rt, projectFromToken(item, rt), true));

export const legacyLocalEvaluation: OpHandler = (item, rt) =>
  answer(item, definitionsOf(rt, projectFromToken(item, rt), wantsCohorts(item)));

export const projectLocalEvaluation: OpHandler = (item, rt) => {
  const project = rt.cache.project(principalOf(item).projectId ?? -1);
  if (!project) throw Errors.notFound('Project not found.');
  return answer(item, definitionsOf(rt, project, wantsCohorts(item)));
};
