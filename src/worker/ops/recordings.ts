/**
 * Session recordings over HTTP:
 * - `POST /s/` (public, the project token as for capture): what posthog-js' recorder sends, `$snapshot` events in
 *   any of capture's encodings; answered `200 {"status": 1}` once every chunk is on disk. Snapshots never reach the
 *   ingest logs or the events: they are a store of their own (src/worker/recordings/).
 * - `session_recordings/` (private, scope `session_recording`): PostHog's list, a recording, its snapshots (the
 *   `sources` listing, then `?source=blob_v2&start_blob_key=&end_blob_key=` as JSONL), viewed marks, DELETE.
 */
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { extractToken } from '../../domain/ingest/index.js';
import { MEMORY_RETRY_AFTER_S } from '../../domain/memory-budget.js';
import { comparator, parseRecordingsQuery, selects } from '../../domain/recordings/list-query.js';
import { type SessionMetadata } from '../../domain/recordings/metadata.js';
import { recordingSettingsOf } from '../../domain/recordings/settings.js';
import { snapshotItemsOf } from '../../domain/recordings/snapshot-items.js';
import { recordingView } from '../../domain/recordings/view.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import { RECORDINGS, type RecordingsService } from '../recordings/recordings-service.js';
import { empty, json } from '../reply.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import { parseEventDate } from './events/dates.js';
import { decodeOrThrow } from './capture.js';
import { viewOf } from './persons/person-view.js';
import { projectForToken } from './public-auth.js';
import { withSessionEvents } from './recording-event-filter.js';
import { bodyOf, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

const gunzipAsync = promisify(gunzip);
const OK = json(200, { status: 1 });
/** PostHog's bound on one snapshots request: at most 100 blob keys. */
export const MAX_BLOBS_PER_REQUEST = 100;

const recordingsOf = (rt: WorkerRuntime): RecordingsService => RECORDINGS.of(rt.services);

/** Peer message: run a recordings retention pass on this worker's shards now (a project's retention changed). */
export const RECORDINGS_CLEAN = 'recordings.clean';
export const recordingsCleanHandler: PeerHandler = async (rt) => {
  await recordingsOf(rt).cleanNow();
  return true;
};

/** `POST /s/`: the recorder's snapshots. */
export const captureSnapshots: OpHandler = async (item, rt) => {
  const recordings = recordingsOf(rt);
  const decoded = decodeOrThrow(item, rt);
  const { token, projectId } = extractToken(decoded.payload, decoded.form, item.meta.query, item.meta.method);
  const project = projectForToken(rt, token, projectId);
  const { items, dropped } = snapshotItemsOf(decoded.payload);
  recordings.countDropped(dropped);
  if (items.length === 0) {
    const reason = [...dropped.keys()][0] ?? 'no_snapshot_data';
    throw Errors.invalidEvents(reason, reason === 'missing_session_id' ? 'properties.$session_id' : reason === 'missing_distinct_id' ? 'distinct_id' : 'properties.$snapshot_data',
      'The request holds no $snapshot event with a session id, a distinct id and rrweb events in $snapshot_data.');
  }
  if (rt.shared.memoryOver) throw Errors.memoryBudget(MEMORY_RETRY_AFTER_S);
  try {
    await recordings.ingest(project.id, items, item.meta.now);
  } catch (error) {
    recordings.noteFailedRequest();
    if (error instanceof ApiError) throw error;
    rt.log.error({ event: 'disk_error', code: (error as NodeJS.ErrnoException)?.code ?? null }, `recording ingest failed (answering 503): ${(error as Error)?.message ?? error}`);
    throw Errors.unavailable();
  }
  return OK;
};

/** PostHog's MinimalPersonSerializer for the person of a distinct id, or null. */
function personOf(rt: WorkerRuntime, team: number, distinctId: string): Record<string, unknown> | null {
  const row = rt.persons.personByDistinctId(team, distinctId);
  if (!row) return null;
  const v = viewOf(row);
  return { id: v.id, name: v.name, distinct_ids: v.distinct_ids, properties: v.properties, created_at: v.created_at, uuid: v.uuid };
}

function viewFor(rt: WorkerRuntime, item: TaskItem, m: SessionMetadata, retentionDays: number): Record<string, unknown> {
  const team = m.team;
  const viewed = recordingsOf(rt).storeOf(team, m.sessionId).wasViewed(team, m.sessionId, principalOf(item).userId);
  return recordingView(m, { now: Date.now(), person: personOf(rt, team, m.distinctId), viewed, retentionDays });
}

function retentionDaysOf(rt: WorkerRuntime, team: number): number {
  return recordingSettingsOf(rt.cache.project(team)?.recordings).retentionDays;
}

function sessionOf(rt: WorkerRuntime, team: number, id: string | undefined): SessionMetadata {
  const m = id ? recordingsOf(rt).storeOf(team, id).session(team, id) : undefined;
  if (!m) throw Errors.notFound('Recording not found.');
  return m;
}

/** `GET session_recordings/`: PostHog's `{results, has_next, version}`, filtered and ordered (list-query.ts). */
export const listRecordings: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const now = Date.now();
  const q = parseRecordingsQuery(item.meta.query, now, (raw) => parseEventDate(raw, now));
  let distinctIds: Set<string> | null = null;
  if (q.personUuid !== null) {
    const person = rt.persons.personByUuid(team, q.personUuid.toLowerCase());
    distinctIds = new Set(person?.distinct_ids ?? []);
  }
  const candidates = recordingsOf(rt).all().flatMap((store) => store.sessionsOf(team).filter((m) => selects(q, m, distinctIds)));
  const selected = await withSessionEvents(rt, team, q.events, candidates, now);
  selected.sort(comparator(q));
  const page = selected.slice(q.offset, q.offset + q.limit);
  const days = retentionDaysOf(rt, team);
  return json(200, { results: page.map((m) => viewFor(rt, item, m, days)), has_next: selected.length > q.offset + q.limit, version: 4 });
};

/** `GET session_recordings/:id/` (with `?save_view=true`, as PostHog's player asks, the caller has now viewed it). */
export const retrieveRecording: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const m = sessionOf(rt, team, item.params.id);
  const save = item.meta.query.save_view;
  if (save === 'true' || save === '1') await recordingsOf(rt).storeOf(team, m.sessionId).markViewed(team, m.sessionId, principalOf(item).userId, nowIso());
  return json(200, viewFor(rt, item, m, retentionDaysOf(rt, team)));
};

/** `PATCH session_recordings/:id/` `{viewed: true}` (PostHog's update serializer; `analyzed` is accepted and ignored). */
export const updateRecording: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const m = sessionOf(rt, team, item.params.id);
  const body = bodyOf(item);
  if (body.viewed !== true && body.analyzed !== true) throw Errors.validation(null, 'invalid_input', "At least one of 'viewed' or 'analyzed' must be provided.");
  if (body.viewed === true) await recordingsOf(rt).storeOf(team, m.sessionId).markViewed(team, m.sessionId, principalOf(item).userId, nowIso());
  return json(200, viewFor(rt, item, m, retentionDaysOf(rt, team)));
};

/** `DELETE session_recordings/:id/`: the recording and everything stored with it; 204. */
export const deleteRecording: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const m = sessionOf(rt, team, item.params.id);
  await recordingsOf(rt).deleteSessions(team, [m.sessionId]);
  return empty(204);
};

function blobKey(attr: string, raw: string | undefined): number {
  if (raw === undefined || !/^\d{1,9}$/.test(raw)) throw Errors.validation(attr, 'invalid_input', 'Blob keys must be integers.');
  return Number(raw);
}

/**
 * `GET session_recordings/:id/snapshots`. Without `source`: the recording's sources, one `blob_v2` per stored
 * chunk (`blob_key` its number, with its time range), by start time, as PostHog lists its blocks. With
 * `source=blob_v2&start_blob_key=a&end_blob_key=b` (at most 100 keys; or `blob_key=n` for one): those chunks'
 * rrweb events as JSONL, one `[window_id, event]` line each, in blob-key order.
 */
export const recordingSnapshots: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const m = sessionOf(rt, team, item.params.id);
  const store = recordingsOf(rt).storeOf(team, m.sessionId);
  const q = item.meta.query;
  const source = q.source;
  if (source === undefined || source === '') {
    const sources = store.chunkIndex(team, m.sessionId)
      .sort((a, b) => a.s - b.s || a.n - b.n)
      .map((c) => ({ source: 'blob_v2', start_timestamp: new Date(c.s).toISOString(), end_timestamp: new Date(c.e).toISOString(), blob_key: String(c.n) }));
    return json(200, { sources });
  }
  if (source !== 'blob_v2') throw Errors.validation('source', 'invalid_input', 'Invalid source must be one of [blob_v2, None]');
  let first: number;
  let last: number;
  if (q.start_blob_key !== undefined || q.end_blob_key !== undefined) {
    first = blobKey('start_blob_key', q.start_blob_key);
    last = blobKey('end_blob_key', q.end_blob_key);
  } else {
    first = last = blobKey('blob_key', q.blob_key);
  }
  if (last < first) throw Errors.validation('end_blob_key', 'invalid_input', 'end_blob_key must not be before start_blob_key.');
  if (last - first > MAX_BLOBS_PER_REQUEST) throw Errors.validation('end_blob_key', 'invalid_input', `Cannot request more than ${MAX_BLOBS_PER_REQUEST} blob keys at once`);
  const chunks = store.chunksOf(team, m.sessionId, first, last);
  if (chunks.length === 0) throw Errors.notFound('No such blob.');
  const parts = await Promise.all(chunks.map((c) => gunzipAsync(c.chunk.z)));
  let body = Buffer.concat(parts);
  // PostHog strips the last newline of the concatenated blocks.
  if (body.length > 0 && body[body.length - 1] === 0x0a) body = body.subarray(0, body.length - 1);
  return { status: 200, body, contentType: 'application/jsonl', headers: { 'Cache-Control': 'max-age=3600', 'Content-Disposition': 'inline' } };
};
