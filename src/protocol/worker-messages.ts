/**
 * The front ↔ shard-worker protocol, defined once. Both sides import these schemas and types; with
 * QUILL_LOG_LEVEL=debug the worker checks every incoming frame against them.
 *
 * Shape of the traffic: the front groups all requests that arrived in one event-loop tick for one worker into a
 * single message on that worker's port (measured: one Piscina task per request caps at ~21k req/s, one message
 * per tick reaches ~66k). A message is a msgpackr-encoded `RequestFrame`; the worker answers with `ReplyFrame`s,
 * each carrying the replies that became ready in one of its ticks. Raw request bodies travel as bytes and are
 * decoded in the worker, keeping the front thread free.
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
  ifNoneMatch: Type.String(),
  authorization: Type.String(),
  /** Receive time, epoch ms: the `now` of timestamp skew correction. */
  now: Type.Number(),
});
export type RequestMeta = Static<typeof RequestMeta>;

/** Who is calling a private endpoint; resolved by the front from its in-memory key cache. */
export const Principal = Type.Object({
  /** 0 for the operator key. */
  userId: Type.Integer(),
  /** 0 for the operator key. */
  organizationId: Type.Integer(),
  /**
   * Project named by the URL (`:project_id` or `@current`) or by `?token=` (local-evaluation definitions), already
   * checked to belong to the organization and to be within the key's projects.
   */
  projectId: Type.Union([Type.Integer(), Type.Null()]),
  /** SHA-256 of the personal API key used (the key-management operations compare rights with it); null: operator. */
  keyDigest: Type.Union([Type.String(), Type.Null()]),
  /**
   * SHA-256 of the console session token when the caller signed in with a password (the session cookie); such a
   * caller has the full rights of their user, as PostHog's session authentication does. Null for keys.
   */
  sessionDigest: Type.Union([Type.String(), Type.Null()]),
  /** The caller used the operator key (QUILL_OPERATOR_KEY), accepted by `/_stats` only. */
  operator: Type.Boolean(),
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

/**
 * On the wire an item is a tuple, not an object: msgpack would repeat every field name in every message, and
 * decoding those maps was a tenth of a worker's time on the flag-evaluation path (measured with --cpu-prof).
 * `toWire`/`fromWire` below are the only code that knows the positions. `query` is not sent: the worker parses
 * `rawQuery` (the front only parses it when it needs a personal key from it).
 */
export const WireItem = Type.Tuple([
  Type.String(), // op
  Type.String(), // method
  Type.String(), // path
  Type.String(), // rawQuery
  Type.String(), // url
  Type.String(), // contentType
  Type.String(), // contentEncoding
  Type.String(), // ip
  Type.String(), // ifNoneMatch
  Type.String(), // authorization
  Type.Number(), // now
  Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]), // params (null: none)
  Type.Union([Type.Tuple([Type.Integer(), Type.Integer(), Type.Union([Type.Integer(), Type.Null()]), Type.Union([Type.String(), Type.Null()]), Type.Boolean(), Type.Union([Type.String(), Type.Null()])]), Type.Null()]), // principal
  Type.Unknown(), // body
  Type.Union([Bytes, Type.Null()]), // raw
]);
export type WireItem = Static<typeof WireItem>;

/**
 * Ingestion operations. They yield to every other request: the worker starts them after the other requests of a
 * frame (src/worker/request-port.ts), and the front sends other requests to the worker with the fewest other
 * requests unanswered, whatever ingestion it is waiting on (src/front/worker-pool.ts).
 */
const INGESTION_OPS: ReadonlySet<string> = new Set(['capture', 'engage', 'recordings.capture']);

export function isIngestion(op: string): boolean {
  return INGESTION_OPS.has(op);
}

/** What the front posts on a worker's port once per tick: request id, item, request id, item, ... */
export const RequestFrame = Type.Array(Type.Union([Type.Integer(), WireItem]));
export type RequestFrame = Static<typeof RequestFrame>;

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export function toWire(item: TaskItem): WireItem {
  const m = item.meta;
  const p = item.principal;
  const hasParams = Object.keys(item.params).length > 0;
  return [
    item.op, m.method, m.path, m.rawQuery, m.url, m.contentType, m.contentEncoding, m.ip, m.ifNoneMatch, m.authorization, m.now,
    hasParams ? item.params : null, p ? [p.userId, p.organizationId, p.projectId, p.keyDigest, p.operator, p.sessionDigest] : null, item.body ?? null, item.raw,
  ];
}

export function fromWire(w: WireItem, parseQuery: (raw: string) => Record<string, string>): TaskItem {
  const p = w[12];
  return {
    op: w[0],
    meta: {
      method: w[1], path: w[2], rawQuery: w[3], query: parseQuery(w[3]), url: w[4], contentType: w[5], contentEncoding: w[6],
      ip: w[7], ifNoneMatch: w[8], authorization: w[9], now: w[10],
    },
    params: w[11] ?? NO_PARAMS,
    principal: p ? { userId: p[0], organizationId: p[1], projectId: p[2], keyDigest: p[3], operator: p[4], sessionDigest: p[5] } : null,
    body: w[13],
    raw: w[14],
  };
}

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

/** A reply on the wire: [status, body, contentType or null, headers or null, authChanged]. */
export const WireReply = Type.Tuple([
  Type.Integer(),
  Type.Union([Type.String(), Bytes]),
  Type.Union([Type.String(), Type.Null()]),
  Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
  Type.Boolean(),
]);
export type WireReply = Static<typeof WireReply>;

/** What a worker posts back, once per worker tick in which requests finished: request id, reply, ... */
export const ReplyFrame = Type.Array(Type.Union([Type.Integer(), WireReply]));
export type ReplyFrame = Static<typeof ReplyFrame>;

export function replyToWire(r: Reply): WireReply {
  return [r.status, r.body, r.contentType ?? null, r.headers ?? null, r.authChanged === true];
}

export function replyFromWire(w: WireReply): Reply {
  const r: Reply = { status: w[0], body: w[1] };
  if (w[2] !== null) r.contentType = w[2];
  if (w[3] !== null) r.headers = w[3];
  if (w[4]) r.authChanged = true;
  return r;
}

/** Control tasks run once (start-up, shutdown) as Piscina tasks. */
export const ControlTask = Type.Union([
  /** Runs for the thread's life: requests arrive on `port` (see src/front/worker-pool.ts); resolves on shutdown. */
  Type.Object({ control: Type.Literal('serve'), port: Type.Unsafe<import('node:worker_threads').MessagePort>({ description: 'MessagePort' }) }),
  Type.Object({ control: Type.Literal('bootstrap') }),
  /** After bootstrap, on every worker: refresh caches, open the shards this worker owns (from the stored layout). */
  Type.Object({ control: Type.Literal('open') }),
  /** Once every worker has opened its shards: replay what the logs hold after their checkpoints. */
  Type.Object({ control: Type.Literal('recover') }),
  Type.Object({ control: Type.Literal('auth-snapshot') }),
  /** A project's definitions version and per-flag digests, for the front's flag streams (src/front/flag-streams.ts). */
  Type.Object({ control: Type.Literal('flags-state'), projectId: Type.Integer() }),
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
  /** The first user's console password, when it was set just now (first start, or a directory from before passwords). */
  adminPassword: Type.Union([Type.String(), Type.Null()]),
});
export type BootstrapResult = Static<typeof BootstrapResult>;

/**
 * What the front needs to authenticate private requests without I/O: personal keys are kept as SHA-256 digests
 * (the plain key is shown once at creation), users with their organization and current project, projects with
 * their organization.
 */
export const AuthKey = Type.Object({
  digest: Type.String(),
  userId: Type.Integer(),
  scopes: Type.Array(Type.String()),
  scopedTeams: Type.Union([Type.Array(Type.Integer()), Type.Null()]),
  /** Organization uuids. */
  scopedOrganizations: Type.Union([Type.Array(Type.String()), Type.Null()]),
});
export type AuthKey = Static<typeof AuthKey>;

export const AuthUser = Type.Object({ id: Type.Integer(), organizationId: Type.Integer(), currentProjectId: Type.Union([Type.Integer(), Type.Null()]) });
export type AuthUser = Static<typeof AuthUser>;

/** A console session as the front checks it: the token's digest, its user, its CSRF token, when it expires (epoch ms). */
export const AuthSession = Type.Object({ digest: Type.String(), userId: Type.Integer(), csrf: Type.String(), expiresAt: Type.Number() });
export type AuthSession = Static<typeof AuthSession>;

export const AuthSnapshot = Type.Object({
  keys: Type.Array(AuthKey),
  sessions: Type.Array(AuthSession),
  users: Type.Array(AuthUser),
  organizations: Type.Array(Type.Object({ id: Type.Integer(), uuid: Type.String() })),
  /** `token` is the public project API key: local-evaluation definitions name their project with it. */
  projects: Type.Array(Type.Object({ id: Type.Integer(), organizationId: Type.Integer(), token: Type.String() })),
});
export type AuthSnapshot = Static<typeof AuthSnapshot>;

/**
 * Answer of the internal `auth.key` operation (no route names it; the front calls it for a key its cache does
 * not know): the key and its user, read afresh, or null when no such key is stored.
 */
export type AuthKeyLookup = { key: AuthKey; user: AuthUser } | null;
