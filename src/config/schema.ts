import Type, { type Static } from 'typebox';

/**
 * Quill's configuration. Defaults live in `config/default.json`; every field can be overridden by the
 * environment variable named in its description. `workers: 0` means "one per core".
 */
export const ConfigSchema = Type.Object({
  host: Type.String({ description: 'QUILL_HOST: interface to bind', minLength: 1 }),
  port: Type.Integer({ description: 'QUILL_PORT: TCP port (0 = pick a free one)', minimum: 0, maximum: 65535 }),
  dataDir: Type.String({ description: 'QUILL_DATA_DIR: where LMDB environments and ingest logs live', minLength: 1 }),
  workers: Type.Integer({ description: 'QUILL_WORKERS: shard worker threads (0 = one per core)', minimum: 0, maximum: 64 }),
  maxBodyMb: Type.Number({ description: 'QUILL_MAX_BODY_MB: largest accepted request body, also after decompression', exclusiveMinimum: 0 }),
  projectApiKey: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'QUILL_PROJECT_API_KEY: key of the first project (only when the data directory is new)' }),
  personalApiKey: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'QUILL_PERSONAL_API_KEY: key of the first user (only when the data directory is new)' }),
  adminPassword: Type.Union([Type.String({ minLength: 8, maxLength: 128 }), Type.Null()], { description: 'QUILL_ADMIN_PASSWORD: console password of the first user (only when it has none yet: a new data directory)' }),
  consoleOrigin: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'QUILL_CONSOLE_ORIGIN: comma-separated origins (besides the server\'s own) whose pages may read private-API answers (CORS with credentials)' }),
  operatorKey: Type.Union([Type.String({ minLength: 16 }), Type.Null()], { description: 'QUILL_OPERATOR_KEY: a secret that reads GET /_stats for every organization (no other endpoint)' }),
  logLevel: Type.Union([Type.Literal('silent'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug')], { description: 'QUILL_LOG_LEVEL: silent (errors only), error, warn, info or debug' }),
  accessLog: Type.Boolean({ description: 'QUILL_ACCESS_LOG: one JSON line per HTTP request (method, path, route, status, duration)' }),
  metricsToken: Type.Union([Type.String({ minLength: 16 }), Type.Null()], { description: 'QUILL_METRICS_TOKEN: a secret (16+ characters) that GET /metrics requires as Authorization: Bearer' }),
  metricsPort: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()], { description: 'QUILL_METRICS_PORT: serve /metrics on this port (same host) instead of the public port' }),
  backupDir: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'QUILL_BACKUP_DIR: where POST /_backup writes its backups (off when unset)' }),
  retentionIntervalMinutes: Type.Number({ description: 'QUILL_RETENTION_INTERVAL_MINUTES: how often expired events are deleted (projects with event_retention_days)', exclusiveMinimum: 0 }),
  faultInjection: Type.Boolean({ description: 'QUILL_FAULT_INJECTION: enables POST /_fault/*, for tests of failure handling only' }),
  backlogHigh: Type.Integer({ description: 'QUILL_BACKLOG_HIGH: events acknowledged and not yet applied by one shard above which new requests wait', minimum: 1 }),
  stopApplySeconds: Type.Number({ description: 'QUILL_STOP_APPLY_SECONDS: on SIGTERM, how long the shards keep applying their backlog before closing (the rest is applied at the next start)', minimum: 0 }),
  logSegmentMb: Type.Number({ description: 'QUILL_LOG_SEGMENT_MB: size of an ingest log segment file (the unit in which applied records are released)', exclusiveMinimum: 0, maximum: 1024 }),
  durabilityTrace: Type.Boolean({ description: 'QUILL_DURABILITY_TRACE: tests only; records the order of log writes, fdatasyncs and acknowledgements' }),
  analyticsCacheMb: Type.Number({ description: 'QUILL_ANALYTICS_CACHE_MB: decoded columns each shard worker keeps in memory for analyses', minimum: 0 }),
  hotPersonsMb: Type.Number({ description: 'QUILL_HOT_PERSONS_MB: persons each shard worker keeps in memory for the apply (the visitors seen last; estimated size)', minimum: 0 }),
  queryTimeoutS: Type.Number({ description: 'QUILL_QUERY_TIMEOUT_S: time budget of an analysis or query, seconds (a request may ask for less with ?timeout=)', exclusiveMinimum: 0 }),
  queryMemoryMb: Type.Number({ description: 'QUILL_QUERY_MEMORY_MB: how much a worker\'s heap may grow while one analysis or query runs there', exclusiveMinimum: 0 }),
  queryConcurrency: Type.Integer({ description: 'QUILL_QUERY_CONCURRENCY: analyses and queries running at once per worker', minimum: 1 }),
  crashBackoff: Type.Boolean({ description: 'QUILL_CRASH_BACKOFF: a worker that died 3 times within a minute is replaced after a growing delay (1 s … 30 s); 0 replaces it at once (the worker-crash soak, which is a crash loop on purpose)' }),
  watchdogS: Type.Number({ description: 'QUILL_WATCHDOG_S: a worker whose event loop has not turned for this long is reported stalled and gets no new flag or API requests while another worker is healthy', exclusiveMinimum: 0 }),
  queryQueue: Type.Integer({ description: 'QUILL_QUERY_QUEUE: analyses and queries waiting per worker beyond which requests get 429', minimum: 0 }),
});

export type Config = Static<typeof ConfigSchema>;

/** Environment variable for each config field, in one place so the loader and config/README.md agree. */
export const ENV_NAMES: Record<keyof Config, string> = {
  host: 'QUILL_HOST',
  port: 'QUILL_PORT',
  dataDir: 'QUILL_DATA_DIR',
  workers: 'QUILL_WORKERS',
  maxBodyMb: 'QUILL_MAX_BODY_MB',
  projectApiKey: 'QUILL_PROJECT_API_KEY',
  personalApiKey: 'QUILL_PERSONAL_API_KEY',
  adminPassword: 'QUILL_ADMIN_PASSWORD',
  consoleOrigin: 'QUILL_CONSOLE_ORIGIN',
  operatorKey: 'QUILL_OPERATOR_KEY',
  logLevel: 'QUILL_LOG_LEVEL',
  accessLog: 'QUILL_ACCESS_LOG',
  metricsToken: 'QUILL_METRICS_TOKEN',
  metricsPort: 'QUILL_METRICS_PORT',
  backupDir: 'QUILL_BACKUP_DIR',
  retentionIntervalMinutes: 'QUILL_RETENTION_INTERVAL_MINUTES',
  faultInjection: 'QUILL_FAULT_INJECTION',
  backlogHigh: 'QUILL_BACKLOG_HIGH',
  stopApplySeconds: 'QUILL_STOP_APPLY_SECONDS',
  logSegmentMb: 'QUILL_LOG_SEGMENT_MB',
  durabilityTrace: 'QUILL_DURABILITY_TRACE',
  analyticsCacheMb: 'QUILL_ANALYTICS_CACHE_MB',
  hotPersonsMb: 'QUILL_HOT_PERSONS_MB',
  queryTimeoutS: 'QUILL_QUERY_TIMEOUT_S',
  queryMemoryMb: 'QUILL_QUERY_MEMORY_MB',
  queryConcurrency: 'QUILL_QUERY_CONCURRENCY',
  queryQueue: 'QUILL_QUERY_QUEUE',
  watchdogS: 'QUILL_WATCHDOG_S',
  crashBackoff: 'QUILL_CRASH_BACKOFF',
};
