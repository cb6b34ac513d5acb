/**
 * The front ↔ shard-worker protocol, defined once. Both sides import these schemas and types; in tests and with
 * QUILL_LOG_LEVEL=debug the worker checks every incoming batch against them.
 *
 * Shape of the traffic: the front groups all requests that arrived in one event-loop tick for one worker and lane
 * into a single Piscina task (measured: one task per request caps at ~21k req/s, one per tick reaches ~66k).
 * A task is a msgpackr-encoded `TaskBatch`; the answer is a msgpackr-encoded `ReplyBatch` with one reply per item,
 * in order. Raw request bodies travel as bytes and are decoded in the worker, keeping the front thread free.
 */
import Type, { type Static } from 'typebox';

/** Bytes (a Uint8Array or Buffer). typebox has no binary type; the structure check only documents it. */
const Bytes = Type.Unsafe<Uint8Array>({ description: 'bytes' });

/** Request facts the front reads synchronously from uWS before the first await (uWS invalidates them after). */
export const RequestMeta = Type.Object({
  method: Type.String(),
  path: Type.String(),
  /** Decoded query parameters (last value wins). */
  query: Type.Record(Type.String(), Type.String()),
  /** Raw query string without `?`, used to build absolute pagination URLs that keep every parameter. */
  rawQuery: Type.String(),
  /** Absolute URL of the request without the query string, e.g. `http://127.0.0.1:8000/api/projects/1/...`. */
  url: Type.String(),
  contentType: Type.String(),
  contentEncoding: Type.String(),
  ip: Type.String(),
  userAgent: Type.String(),
  ifNoneMatch: Type.String(),
  authorization: Type.String(),
  /** Receive time, epoch ms: the `now` of timestamp skew correction. */
  now: Type.Number(),
});
export type RequestMeta = Static<typeof RequestMeta>;

/** Who is calling a private endpoint; resolved by the front from its in-memory key cache. */
export const Principal = Type.Object({
  userId: Type.Integer(),
  organizationId: Type.Integer(),
  /** Project named by the URL (`:project_id` or `@current`), already checked to belong to the organization. */
  projectId: Type.Union([Type.Integer(), Type.Null()]),
});
export type Principal = Static<typeof Principal>;

export const TaskItem = Type.Object({
  /** Operation name, e.g. `flags.create`, `ingest.capture`, `decide`; see src/worker/ops/index.ts. */
  op: Type.String(),
  meta: RequestMeta,
  /** Route parameters by name (`id`, `parent_lookup_feature_flag_id`, ...). */
  params: Type.Record(Type.String(), Type.String()),
  principal: Type.Union([Principal, Type.Null()]),
  /** JSON body already parsed and schema-checked by the front (management API). */
  body: Type.Unknown(),
  /** Undecoded body bytes (ingestion, flag evaluation: the worker inflates and parses). */
  raw: Type.Union([Bytes, Type.Null()]),
});
export type TaskItem = Static<typeof TaskItem>;

export const TaskBatch = Type.Object({ items: Type.Array(TaskItem) });
export type TaskBatch = Static<typeof TaskBatch>;

export const Reply = Type.Object({
  status: Type.Integer(),
  /** JSON text, CSV text, or bytes; empty string for no body. */
  body: Type.Union([Type.String(), Bytes]),
  contentType: Type.Optional(Type.String()),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  /** Set when the operation changed keys, users, projects or memberships: the front refreshes its auth cache. */
  authChanged: Type.Optional(Type.Boolean()),
});
export type Reply = Static<typeof Reply>;

export const ReplyBatch = Type.Object({ replies: Type.Array(Reply) });
export type ReplyBatch = Static<typeof ReplyBatch>;

/** Control tasks run once (start-up, shutdown); they are not batched. */
export const ControlTask = Type.Union([
  Type.Object({ control: Type.Literal('bootstrap') }),
  /** After bootstrap: refresh caches, open and recover the shards this worker owns (from the stored layout). */
  Type.Object({ control: Type.Literal('init') }),
  Type.Object({ control: Type.Literal('auth-snapshot') }),
  Type.Object({ control: Type.Literal('shutdown') }),
]);
export type ControlTask = Static<typeof ControlTask>;

/** Result of `bootstrap`: the data-directory layout, and the credentials if they were created just now. */
export const BootstrapResult = Type.Object({
  shardCount: Type.Integer(),
  created: Type.Boolean(),
  projectId: Type.Integer(),
  projectApiKey: Type.String(),
  personalApiKey: Type.Union([Type.String(), Type.Null()]),
  email: Type.String(),
});
export type BootstrapResult = Static<typeof BootstrapResult>;

/**
 * What the front needs to authenticate private requests without I/O: personal keys are kept as SHA-256 digests
 * (the plain key is shown once at creation), users with their organization and current project, projects with
 * their organization.
 */
export const AuthSnapshot = Type.Object({
  keys: Type.Array(Type.Object({ digest: Type.String(), userId: Type.Integer() })),
  users: Type.Array(Type.Object({ id: Type.Integer(), organizationId: Type.Integer(), currentProjectId: Type.Union([Type.Integer(), Type.Null()]) })),
  projects: Type.Array(Type.Object({ id: Type.Integer(), organizationId: Type.Integer() })),
});
export type AuthSnapshot = Static<typeof AuthSnapshot>;

/**
 * Index, in the Int32Array shared with every worker thread (workerData.shared), of the "start-up complete" word.
 * It becomes 1 once the data-directory lock is held, bootstrap ran and every shard recovered, so a thread Piscina
 * starts later to replace one that died knows it may open its shards by itself (src/worker/entry.ts).
 */
export const STARTED = 0;
