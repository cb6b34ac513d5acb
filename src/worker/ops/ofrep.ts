/**
 * OFREP, OpenFeature's remote evaluation protocol: `POST /ofrep/v1/evaluate/flags/:key` (one flag, server
 * providers) and `POST /ofrep/v1/evaluate/flags` (every flag, client providers, with a strong ETag and `304` on
 * `If-None-Match`). The project API key authenticates, as `Authorization: Bearer phc_…` or `X-API-Key: phc_…` (the
 * front passes either as Bearer). The mapping of contexts, values and reasons is src/domain/flags/ofrep.ts; the
 * evaluation, the stored person and groups are those of `/flags/` (src/worker/ops/decide.ts).
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { evaluateFlag, evaluateFlags, ofrepEvaluationOf, ofrepRequestOf, type CompiledFlagSet, type FlagResult, type OfrepRequest } from '../../domain/flags/index.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../domain/json-depth.js';
import type { Project } from '../../domain/model.js';
import { Errors } from '../../protocol/errors.js';
import type { Reply, TaskItem } from '../../protocol/worker-messages.js';
import type { WorkerRuntime } from '../runtime.js';
import { evaluationContextFor } from './evaluation-context.js';
import { projectForToken } from './public-auth.js';
import type { OpHandler } from './types.js';

/** Lets a browser's provider read the ETag of a cross-origin answer. */
const EXPOSE = { 'Access-Control-Expose-Headers': 'ETag' };

/**
 * The project of the key in `Authorization: Bearer` (or `X-API-Key`, or `?token=`). Quill has no secret flags key
 * (PostHog's `phs_…`), and personal keys reach /flags/ only with a `project_id`, which OFREP has no place for:
 * the project API key it is, as for /flags/.
 */
function projectOf(item: TaskItem, rt: WorkerRuntime): Project {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(item.meta.authorization);
  const token = match?.[1] ?? item.meta.query.token ?? null;
  return projectForToken(rt, token, undefined, Errors.noApiKey);
}

function bodyOf(item: TaskItem, rt: WorkerRuntime, key: string | null): unknown {
  let raw: Uint8Array = item.raw ?? new Uint8Array(0);
  try {
    if (/gzip/i.test(item.meta.contentEncoding)) raw = gunzipSync(raw, { maxOutputLength: Math.floor(rt.config.maxBodyMb * 1024 * 1024) });
    const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
    const body: unknown = text.trim() === '' ? {} : JSON.parse(text);
    if (nestsDeeperThan(body, MAX_JSON_DEPTH)) throw new Error(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    return body;
  } catch (error) {
    throw Errors.ofrep('PARSE_ERROR', `The body is not JSON: ${(error as Error).message}`, key);
  }
}

function requestOf(item: TaskItem, rt: WorkerRuntime, key: string | null): OfrepRequest {
  const outcome = ofrepRequestOf(bodyOf(item, rt, key));
  if (!outcome.ok) throw Errors.ofrep(outcome.errorCode, outcome.detail, key);
  return outcome.request;
}

function contextFor(rt: WorkerRuntime, project: Project, set: CompiledFlagSet, req: OfrepRequest) {
  return evaluationContextFor(rt, project.id, set, {
    distinctId: req.distinctId, anonDistinctId: null, personProperties: req.personProperties,
    groups: req.groups, groupProperties: req.groupProperties, deviceId: null,
  });
}

/** `POST /ofrep/v1/evaluate/flags/:key`: one flag; `404 FLAG_NOT_FOUND` for a key no live flag has. */
export const evaluateOne: OpHandler = (item, rt) => {
  const key = item.params.key ?? '';
  const project = projectOf(item, rt);
  const request = requestOf(item, rt, key);
  const set = rt.cache.flagSet(project.id);
  if (!set.byKey.has(key)) throw Errors.ofrep('FLAG_NOT_FOUND', `Flag '${key}' was not found.`, key);
  const result = evaluateFlag(set, key, contextFor(rt, project, set, request));
  if (result === null) throw Errors.ofrep('FLAG_NOT_FOUND', `Flag '${key}' was not found.`, key);
  rt.flagUsage.noteResults(project.id, set, [result], item.meta.now);
  const evaluation = ofrepEvaluationOf(result);
  if ('errorCode' in evaluation) throw Errors.ofrep(evaluation.errorCode, evaluation.errorDetails, key);
  return { status: 200, body: JSON.stringify(evaluation), contentType: 'application/json' };
};

/**
 * `POST /ofrep/v1/evaluate/flags`: every live flag of the project in stored order, disabled ones as `DISABLED`
 * (so a client tells "off" from "unknown"). The ETag is a digest of the answer: the same flags, person and context
 * give the same tag, and any change to one of them a new one.
 */
export const evaluateAll: OpHandler = (item, rt) => {
  const project = projectOf(item, rt);
  const request = requestOf(item, rt, null);
  const set = rt.cache.flagSet(project.id);
  const ctx = contextFor(rt, project, set, request);
  const active = evaluateFlags(set, ctx);
  rt.flagUsage.noteResults(project.id, set, active, item.meta.now);
  const byIndex = new Map<number, FlagResult>();
  for (const r of active) byIndex.set(r.flag.index, r);
  const flags = [];
  for (const flag of set.flags) {
    const r = byIndex.get(flag.index) ?? (flag.active ? null : evaluateFlag(set, flag.key, ctx));
    if (r) flags.push(ofrepEvaluationOf(r));
  }
  const body = JSON.stringify({ flags });
  const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  const tags = item.meta.ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (tags.includes(etag) || tags.includes('*')) return { status: 304, body: '', headers: { ETag: etag, ...EXPOSE } } satisfies Reply;
  return { status: 200, body, contentType: 'application/json', headers: { ETag: etag, 'Cache-Control': 'no-cache', ...EXPOSE } };
};
