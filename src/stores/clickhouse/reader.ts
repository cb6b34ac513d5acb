/**
 * Queries on the export's ClickHouse (`QUILL_ANALYTICS=clickhouse`): a client of its own beside the sink's, so that
 * a long analysis never holds a connection the export is waiting for. Every query is read-only and bounded by the
 * request's budget, whatever its text: `readonly = 2` (reads only; the settings below may still be sent with it),
 * `max_execution_time` and `max_memory_usage`, with the user's literals as query parameters.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { SinkConfig } from './sink.js';

export interface ReadLimits {
  /** Seconds ClickHouse may spend on the query. */
  maxExecutionS: number;
  /** Bytes of memory it may use for it. */
  maxMemoryBytes: number;
  /** Rows the answer may have; beyond them ClickHouse fails the query (TOO_MANY_ROWS_OR_BYTES, code 396). */
  maxResultRows?: number;
}

export interface ReadResult {
  /** ClickHouse's names and types of the columns. */
  meta: { name: string; type: string }[];
  data: unknown[][];
  /** Bytes of the answer's body, as received: what the query cost the network and this node's parsing. */
  bytes: number;
}

/** A ClickHouse error answered for a query (its code tells a timeout or memory limit from a query error). */
export class ClickHouseQueryError extends Error {
  constructor(message: string, readonly code: string | null) {
    super(message);
  }
}

/**
 * Settings sent with every read when the server knows them (older servers refuse a setting they do not know).
 * `query_plan_join_swap_table = 0` (ClickHouse 25.1+ picks a join's build side from row estimates, `auto`): the
 * printer joins events to the small person_distinct_id2 table written on the right, to be the hash table; measured
 * on 3M events (chdb, ClickHouse 26.7) the planner estimated the filtered events at ~4,400 rows and built the hash
 * table from them instead, so one events read needed 128-256 MB rather than 32-64 MB, and two such reads (retention's
 * returns) went past 1 GB at 10M events.
 */
/** The schema version whose export started writing `person_distinct_id_overrides` (schema.ts). */
const OVERRIDES_SINCE_VERSION = 2;

const READ_SETTINGS_IF_KNOWN: Readonly<Record<string, string>> = { query_plan_join_swap_table: '0' };

/**
 * The settings every read carries: read-only, the query budget's time and memory, and — so that a GROUP BY or a
 * sort over many persons spills to disk rather than failing at the memory bound (funnels, retention and weekly
 * active users group per person) — external aggregation and sorting past half of that memory, ClickHouse's own
 * advice for these two settings.
 */
export function readSettingsFor(limits: ReadLimits) {
  const memory = Math.max(1, Math.floor(limits.maxMemoryBytes));
  const spillAt = String(Math.max(1, Math.floor(memory / 2)));
  return {
    readonly: '2' as const,
    max_execution_time: Math.max(1, Math.ceil(limits.maxExecutionS)),
    max_memory_usage: String(memory),
    max_bytes_before_external_group_by: spillAt,
    max_bytes_before_external_sort: spillAt,
    ...(limits.maxResultRows !== undefined ? { max_result_rows: String(limits.maxResultRows), result_overflow_mode: 'throw' as const } : {}),
    // Quill's dialect: a LEFT JOIN's missing side is NULL; 64-bit numbers as JSON numbers.
    join_use_nulls: 1 as const,
    output_format_json_quote_64bit_integers: 0 as const,
  };
}

export class ClickHouseReader {
  /** Which of READ_SETTINGS_IF_KNOWN this server has, asked once (null: not asked yet, or the asking failed). */
  private knownSettings: Promise<Record<string, string>> | null = null;

  private constructor(private readonly client: ClickHouseClient, readonly database: string) {}

  static async open(config: SinkConfig): Promise<ClickHouseReader> {
    const { createClient, ClickHouseLogLevel } = await import('@clickhouse/client');
    const client = createClient({
      url: config.url,
      ...(config.user !== null ? { username: config.user } : {}),
      ...(config.password !== null ? { password: config.password } : {}),
      database: config.database,
      log: { level: ClickHouseLogLevel.OFF },
      // ClickHouse stops a query at its max_execution_time; the request outlives the longest budget.
      request_timeout: 3_600_000,
      max_open_connections: 4,
    });
    return new ClickHouseReader(client, config.database);
  }

  async select(sql: string, params: Record<string, string>, limits: ReadLimits): Promise<ReadResult> {
    try {
      const result = await this.client.query({ query: sql, format: 'JSONCompact', query_params: params, clickhouse_settings: await this.settings(limits) });
      const text = await result.text();
      const body = JSON.parse(text) as { meta: ReadResult['meta']; data: unknown[][] };
      return { meta: body.meta, data: body.data, bytes: Buffer.byteLength(text) };
    } catch (error) {
      throw queryError(error);
    }
  }

  /**
   * The rows of a query handed to `each` one at a time as they arrive, never all held at once (a sequence analysis
   * turns each into a few numbers). ClickHouse answers only once the query is done (`wait_end_of_query`), so that a
   * limit it reaches is an error with its code rather than a cut answer. Returns the number of rows and the bytes
   * they came in.
   */
  async selectEach(sql: string, params: Record<string, string>, limits: ReadLimits, each: (row: unknown[]) => void): Promise<{ rows: number; bytes: number }> {
    try {
      const result = await this.client.query({
        query: sql, format: 'JSONCompactEachRow', query_params: params, clickhouse_settings: { ...(await this.settings(limits)), wait_end_of_query: 1 },
      });
      let n = 0;
      let bytes = 0;
      for await (const rows of result.stream()) {
        for (const row of rows as { text: string; json(): unknown[] }[]) {
          each(row.json());
          n++;
          // Each row is a line of the body (its text and the newline).
          bytes += Buffer.byteLength(row.text) + 1;
        }
      }
      return { rows: n, bytes };
    } catch (error) {
      throw queryError(error);
    }
  }

  /**
   * Where events' current persons can be looked up: PostHog's `person_distinct_id_overrides` when the export wrote it
   * from this database's start (every row of `quill_schema_version` is 2 or later: the version that added it),
   * else every distinct id's `person_distinct_id2` (a database created earlier has no overrides for older merges).
   */
  async personLookup(): Promise<'overrides' | 'every_distinct_id'> {
    const result = await this.client.query({
      query: `SELECT min(version) AS v, count() AS n FROM ${this.database}.quill_schema_version`, format: 'JSONEachRow', clickhouse_settings: { readonly: '2' },
    });
    const [row] = (await result.json()) as { v: number; n: number }[];
    return row && Number(row.n) > 0 && Number(row.v) >= OVERRIDES_SINCE_VERSION ? 'overrides' : 'every_distinct_id';
  }

  private async settings(limits: ReadLimits) {
    return { ...readSettingsFor(limits), ...(await this.readSettings()) };
  }

  /** The settings of READ_SETTINGS_IF_KNOWN the server knows; none while it cannot be asked (asked again later). */
  private async readSettings(): Promise<Record<string, string>> {
    this.knownSettings ??= (async () => {
      const names = Object.keys(READ_SETTINGS_IF_KNOWN);
      const result = await this.client.query({
        query: 'SELECT name FROM system.settings WHERE has({names:Array(String)}, name)',
        format: 'JSONEachRow',
        query_params: { names },
        clickhouse_settings: { readonly: '2' },
      });
      const rows = (await result.json()) as { name: string }[];
      return Object.fromEntries(rows.map((r) => [r.name, READ_SETTINGS_IF_KNOWN[r.name]!]));
    })();
    try {
      return await this.knownSettings;
    } catch {
      this.knownSettings = null;
      return {};
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** ClickHouse's own errors carry its numeric code; a network failure carries a system one (ECONNREFUSED…), kept as is. */
function queryError(error: unknown): unknown {
  const e = error as { message?: string; code?: unknown };
  return /^\d+$/.test(String(e?.code)) ? new ClickHouseQueryError(String(e.message ?? error), String(e.code)) : error;
}
