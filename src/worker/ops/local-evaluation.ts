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
import { projectIdOf, type OpHandler } from './types.js';
import { projectForToken } from './public-auth.js';

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

/** The project the front resolved from `?token=` (checked against the key's organization, projects and scopes). */
function projectOf(item: TaskItem, rt: WorkerRuntime): Project {
  const project = rt.cache.project(projectIdOf(item));
  if (!project) throw Errors.notFound('Project not found.');
  return project;
}

const wantsCohorts = (item: TaskItem): boolean => 'send_cohorts' in item.meta.query && item.meta.query.send_cohorts !== 'false';

/** `/flags/definitions` always sends cohorts (as the Rust service does); the older path only when asked. */
export const flagDefinitions: OpHandler = (item, rt) => answer(item, definitionsOf(rt, projectOf(item, rt), true));

export const legacyLocalEvaluation: OpHandler = (item, rt) =>
  answer(item, definitionsOf(rt, projectOf(item, rt), wantsCohorts(item)));

export const projectLocalEvaluation: OpHandler = (item, rt) => answer(item, definitionsOf(rt, projectOf(item, rt), wantsCohorts(item)));

/**
 * What the front's flag streams (src/front/flag-streams.ts) know of a project: the definitions' ETag (the version
 * a stream announces) and a digest of each flag as the definitions carry it, so the front can name the keys that
 * changed between two versions. Built from the cached body, once per revision and only when a stream asks.
 */
export interface FlagStreamState {
  version: string;
  flags: Record<string, string>;
}

export function flagStreamState(rt: WorkerRuntime, projectId: number): FlagStreamState | null {
  const project = rt.cache.project(projectId);
  if (!project) return null;
  const defs = definitionsOf(rt, project, true);
  return rt.cache.memo(projectId, 'stream-state', () => {
    const flags: Record<string, string> = {};
    for (const flag of (JSON.parse(defs.body) as { flags: { key: string }[] }).flags) {
      flags[flag.key] = createHash('sha256').update(JSON.stringify(flag)).digest('base64').slice(0, 16);
    }
    return { version: defs.etag, flags };
  });
}

/** `GET /flags/stream` with a personal key: the front only needs to know the caller may read the project. */
export const flagStream: OpHandler = (item, rt) => ({ status: 200, body: JSON.stringify({ project_id: projectOf(item, rt).id }), contentType: 'application/json' });

/** `GET /flags/stream?token=<project API key>` (browsers): the token names the project, as for /flags/. */
export const publicFlagStream: OpHandler = (item, rt) => {
  const token = item.meta.query.token ?? item.meta.query.api_key ?? null;
  const project = projectForToken(rt, token?.trim() || null, undefined);
  return { status: 200, body: JSON.stringify({ project_id: project.id }), contentType: 'application/json' };
};
