/**
 * The one catalogue of errors Quill answers with. Bodies follow PostHog's drf-exceptions-hog shape
 * `{type, code, detail, attr}` so SDKs and tools behave as they do against PostHog. Callers never build ad-hoc
 * error bodies: they throw one of these.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
    /** Some PostHog endpoints answer an error status with an empty body (e.g. DELETE of a flag). */
    readonly emptyBody = false,
    /** Fields some PostHog endpoints add to the usual four (e.g. `message` on /persons/lifecycle/). */
    readonly extra: Readonly<Record<string, string>> | null = null,
    /** Response headers that go with the error (`Retry-After` on back-pressure). */
    readonly headers: Readonly<Record<string, string>> | null = null,
  ) {
    super(detail);
  }

  body(): string {
    if (this.emptyBody) return '';
    return JSON.stringify({ type: this.type, code: this.code, detail: this.detail, attr: this.attr, ...this.extra });
  }
}

export const Errors = {
  validation: (attr: string | null, code: string, detail: string) => new ApiError(400, 'validation_error', code, detail, attr),
  required: (attr: string) => new ApiError(400, 'validation_error', 'required', 'This field is required.', attr),
  /** /persons/lifecycle/ without target_date or lifecycle_type: PostHog's `{message, detail}`, in the usual shape. */
  missingParameter: (attr: string, detail: string) =>
    new ApiError(400, 'validation_error', 'required', detail, attr, false, { message: 'Missing parameter' }),
  parseError: (reason: string) => new ApiError(400, 'invalid_request', 'parse_error', `JSON parse error - ${reason}`),
  /** `detail` is complete ("Malformed request data: <reason>", as the decoder words it). */
  invalidPayload: (detail: string) => new ApiError(400, 'validation_error', 'invalid_payload', detail),
  noData: () => new ApiError(400, 'validation_error', 'no_data', 'No data found. Make sure to use a POST request when sending the payload in the body of the request.'),
  invalidProject: () => new ApiError(400, 'validation_error', 'invalid_project', 'Invalid Project ID.', 'project_id'),
  missingDistinctId: () => new ApiError(400, 'validation_error', 'missing_distinct_id', 'Decide requires a distinct_id.'),
  /** A JSON value nested past MAX_JSON_DEPTH (serde_json, which PostHog's capture uses, calls it a parse error). */
  tooDeep: (maxDepth: number) => new ApiError(400, 'invalid_request', 'parse_error', `JSON parse error - nested deeper than ${maxDepth} levels`),
  /**
   * A capture request none of whose events can be stored (PostHog's Rust capture answers 400 for these too).
   * `code` is the reason, as counted in `/_stats` `dropped`; `attr` names the field at fault.
   */
  invalidEvents: (code: string, attr: string | null, detail: string, status = 400) =>
    new ApiError(status, status === 413 ? 'client_error' : 'validation_error', code, detail, attr),

  notAuthenticated: () =>
    new ApiError(401, 'authentication_error', 'not_authenticated', 'Authentication credentials were not provided.'),
  invalidPersonalApiKey: () =>
    new ApiError(401, 'authentication_error', 'invalid_personal_api_key', 'Invalid Personal API key.'),
  invalidApiKey: () =>
    new ApiError(401, 'authentication_error', 'invalid_api_key', 'Project API key invalid. You can find your project API key in the Quill console under Settings (/console/), or in what Quill printed at its first start.'),
  missingApiKey: () =>
    new ApiError(401, 'authentication_error', 'missing_api_key', 'API key not provided. You can find your project API key in the Quill console under Settings (/console/), or in what Quill printed at its first start.'),
  noApiKey: () =>
    new ApiError(401, 'authentication_error', 'no_api_key', 'No API key provided. You can find your project API key in the Quill console under Settings (/console/), or in what Quill printed at its first start.'),

  /** A console session cookie that is unknown, signed out or expired. */
  sessionExpired: () => new ApiError(401, 'authentication_error', 'not_authenticated', 'Your session has expired or you signed out. Sign in again.'),
  /** Django's wording: a cookie-authenticated write without the session's `X-CSRFToken`. */
  csrfFailed: () => new ApiError(403, 'authentication_error', 'csrf_failed', 'CSRF Failed: CSRF token missing or incorrect.'),
  invalidCredentials: () => new ApiError(400, 'validation_error', 'invalid_credentials', 'Invalid email or password.'),
  /** DRF's throttling answer. */
  throttled: (seconds: number) =>
    new ApiError(429, 'throttled_error', 'throttled', `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.`, null, false, null, { 'Retry-After': String(seconds) }),
  /** PostHog's ClickHouseQueryTimeOut: the analysis ran past its time budget (QUILL_QUERY_TIMEOUT_S or ?timeout=). */
  queryTimeout: (detail: string) => new ApiError(504, 'server_error', 'query_timeout', detail),
  /** The analysis' state outgrew QUILL_QUERY_MEMORY_MB. */
  queryMemory: (detail: string) => new ApiError(400, 'validation_error', 'query_memory_limit', detail),
  permissionDenied: (detail = 'You do not have permission to perform this action.') =>
    new ApiError(403, 'authentication_error', 'permission_denied', detail),
  /** PostHog's APIScopePermission wording, for a personal key whose scopes do not hold what the route needs. */
  missingScope: (scope: string) => new ApiError(403, 'authentication_error', 'permission_denied', `API key missing required scope '${scope}'`),
  projectOutsideKey: (projectId: number) =>
    new ApiError(403, 'authentication_error', 'permission_denied', `API key does not have access to the requested project: ID ${projectId}.`),
  keyConfinedToProjects: () =>
    new ApiError(403, 'authentication_error', 'permission_denied', 'API keys with scoped projects are only supported on project-based endpoints.'),
  organizationOutsideKey: (organizationId: string) =>
    new ApiError(403, 'authentication_error', 'permission_denied', `API key does not have access to the requested organization: ID ${organizationId}.`),
  notFound: (detail = 'Not found.') => new ApiError(404, 'invalid_request', 'not_found', detail),
  /** PostHog answers some lookups with a bare 404 (e.g. a flag's remote_config for a flag that is not one). */
  notFoundEmpty: () => new ApiError(404, 'invalid_request', 'not_found', 'Not found.', null, true),
  methodNotAllowed: (method: string) =>
    new ApiError(405, 'invalid_request', 'method_not_allowed', `Method "${method}" not allowed.`),
  conflict: (detail: string) => new ApiError(409, 'invalid_request', 'conflict', detail),
  tooLarge: () => new ApiError(413, 'client_error', 'request_too_large', 'Request too large.'),
  server: (detail = 'A server error occurred.') => new ApiError(500, 'server_error', 'error', detail),
  unavailable: (detail = 'Quill cannot store data right now; retry later.') =>
    new ApiError(503, 'server_error', 'storage_unavailable', detail),
  shuttingDown: () => new ApiError(503, 'server_error', 'shutting_down', 'Quill is shutting down.'),
  /** QUILL_ANALYTICS=clickhouse and ClickHouse did not answer (down, unreachable, refused the connection). */
  clickhouseUnavailable: (reason: string) =>
    new ApiError(503, 'server_error', 'clickhouse_unavailable', `ClickHouse, where this project's queries run, did not answer (${reason}); retry later.`),
  /** Back-pressure: a shard's export to ClickHouse is further behind than QUILL_CLICKHOUSE_MAX_LAG (policy `backpressure`). */
  exportBehind: (retryAfterS: number) =>
    new ApiError(503, 'server_error', 'export_behind', `Quill's export to ClickHouse is behind; retry in ${retryAfterS} s.`, null, false, null, { 'Retry-After': String(retryAfterS) }),
  /** Back-pressure: more events are waiting to be applied than the backlog bound; PostHog's SDKs retry a 5xx. */
  overloaded: (retryAfterS: number) =>
    new ApiError(503, 'server_error', 'overloaded', `Quill is applying a backlog of events; retry in ${retryAfterS} s.`, null, false, null, { 'Retry-After': String(retryAfterS) }),
  /**
   * An OFREP evaluation that failed (src/worker/ops/ofrep.ts): the usual four fields, and the OFREP ones its
   * providers read (`errorCode`, `errorDetails`, and `key` on a single flag's evaluation), so both kinds of client
   * understand it. `FLAG_NOT_FOUND` is a 404, the others 400 (`GENERAL`: 500).
   */
  ofrep: (errorCode: 'FLAG_NOT_FOUND' | 'PARSE_ERROR' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL', detail: string, key: string | null) =>
    new ApiError(
      errorCode === 'FLAG_NOT_FOUND' ? 404 : errorCode === 'GENERAL' ? 500 : 400,
      errorCode === 'FLAG_NOT_FOUND' ? 'invalid_request' : errorCode === 'GENERAL' ? 'server_error' : 'validation_error',
      errorCode.toLowerCase(), detail, errorCode === 'INVALID_CONTEXT' || errorCode === 'TARGETING_KEY_MISSING' ? 'context' : null, false,
      { ...(key === null ? {} : { key }), errorCode, errorDetails: detail },
    ),
  /** A scheduled change that has run (or failed) can no longer be edited or cancelled. */
  scheduledChangeDone: () =>
    new ApiError(400, 'validation_error', 'invalid_input', 'Cannot modify a scheduled change that has already executed.'),
  /** Back-pressure: the process's memory is over QUILL_MEMORY_MB; ingestion waits until what is queued is applied. */
  memoryBudget: (retryAfterS: number) =>
    new ApiError(503, 'server_error', 'memory_budget', `Quill is over its memory budget while it applies what it holds; retry in ${retryAfterS} s.`, null, false, null, { 'Retry-After': String(retryAfterS) }),
} as const;

/** Serialisable form of an ApiError, for the worker → front protocol. */
export interface ErrorReply {
  status: number;
  type: string;
  code: string;
  detail: string;
  attr: string | null;
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
