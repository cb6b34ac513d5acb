/**
 * The connection to the user's ClickHouse, through the official client (`@clickhouse/client`), loaded only when
 * `QUILL_CLICKHOUSE_URL` is set. Two jobs: create PostHog's tables once (src/stores/clickhouse/schema.ts, recorded in
 * `quill_schema_version`), and insert one batch so that a retry of the same batch is a no-op: every insert is
 * synchronous (`async_insert = 0`) and carries the batch's `insert_deduplication_token`.
 */
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import { deletionStatement, SCHEMA_VERSION, schemaStatements, type EventDeletion, type SchemaTarget } from './schema.js';

export interface SinkConfig extends SchemaTarget {
  url: string;
  user: string | null;
  password: string | null;
}

/** A request that ClickHouse did not answer in this long is failed and retried (the batch is the same). */
const REQUEST_TIMEOUT_MS = 60_000;

/** Rows encoded between two looks at the clock. */
const ROWS_PER_CLOCK_LOOK = 64;

/**
 * How an insert shares its thread (src/worker/export/background.ts): encoding a batch's rows takes milliseconds, and
 * flag answers, acknowledgements and the apply wait on the same thread.
 */
export interface InsertPacer {
  due(): boolean;
  pace(): Promise<void>;
}

/** A row as a line of JSONEachRow; `objectsAsText`: the server takes a JSON object for a String column as its text. */
export type RowEncoder<Row> = (row: Row, objectsAsText: boolean) => string;

const OBJECTS_AS_TEXT = 'input_format_json_read_objects_as_strings';

export class ClickHouseSink {
  private schemaReady: Promise<void> | null = null;
  /** Whether the server knows OBJECTS_AS_TEXT (ClickHouse 22.x and later; on by default since 23.x); asked once. */
  private objectsAsText: Promise<boolean> | null = null;

  private constructor(private readonly client: ClickHouseClient, readonly target: SchemaTarget) {}

  static async open(config: SinkConfig): Promise<ClickHouseSink> {
    const { createClient, ClickHouseLogLevel } = await import('@clickhouse/client');
    const client = createClient({
      url: config.url,
      ...(config.user !== null ? { username: config.user } : {}),
      ...(config.password !== null ? { password: config.password } : {}),
      request_timeout: REQUEST_TIMEOUT_MS,
      // Quill logs export failures itself (with the shard and the batch), once per state change.
      log: { level: ClickHouseLogLevel.OFF },
      max_open_connections: 4,
    });
    return new ClickHouseSink(client, { database: config.database, cluster: config.cluster });
  }

  /** Creates the database and tables unless `quill_schema_version` says they are there; retried by the caller. */
  ensureSchema(): Promise<void> {
    this.schemaReady ??= this.createSchema().catch((error: unknown) => {
      this.schemaReady = null;
      throw error;
    });
    return this.schemaReady;
  }

  private async createSchema(): Promise<void> {
    if ((await this.schemaVersion()) >= SCHEMA_VERSION) return;
    for (const statement of schemaStatements(this.target)) await this.client.command({ query: statement });
    await this.client.insert({
      table: `${this.target.database}.quill_schema_version`, format: 'JSONEachRow',
      values: [{ version: SCHEMA_VERSION, applied_at: Math.floor(Date.now() / 1000) }],
      clickhouse_settings: { insert_deduplication_token: `quill-schema-${SCHEMA_VERSION}`, async_insert: 0 },
    });
  }

  private async schemaVersion(): Promise<number> {
    try {
      const result = await this.client.query({ query: `SELECT max(version) AS v FROM ${this.target.database}.quill_schema_version`, format: 'JSONEachRow' });
      const rows = (await result.json()) as { v: number | string }[];
      return Number(rows[0]?.v ?? 0);
    } catch {
      return 0; // no database or table yet
    }
  }

  /**
   * Inserts `rows` into `table` (of the configured database) with `token` as the deduplication token: ClickHouse
   * drops a block whose token it has seen within the table's window, so a batch retried after a failure or a crash
   * (whether or not the first attempt landed) is stored once.
   */
  async insert<Row extends object>(table: string, rows: readonly Row[], token: string, pacer?: InsertPacer, encode: RowEncoder<Row> = (row) => JSON.stringify(row)): Promise<void> {
    if (rows.length === 0) return;
    const objectsAsText = await this.readsObjectsAsText();
    // The rows are encoded here, in slices, rather than by the client's insert, which encodes a whole batch in one
    // go; the text goes as the body of the INSERT statement.
    const lines = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      lines[i] = encode(rows[i]!, objectsAsText);
      if (pacer && i % ROWS_PER_CLOCK_LOOK === ROWS_PER_CLOCK_LOOK - 1 && pacer.due()) await pacer.pace();
    }
    const result = await this.client.exec({
      query: `INSERT INTO ${this.target.database}.${table} FORMAT JSONEachRow`,
      values: Readable.from([`${lines.join('\n')}\n`]),
      clickhouse_settings: {
        insert_deduplication_token: token,
        insert_deduplicate: 1,
        async_insert: 0,
        ...(objectsAsText ? { [OBJECTS_AS_TEXT]: 1 } : {}),
        // A Distributed table forwards the insert (and its token) to the shards before answering.
        ...(this.target.cluster ? { distributed_foreground_insert: 1 } : {}),
      },
    });
    // The answer is empty; read to its end so that the connection goes back to the pool.
    await finished(result.stream.resume());
  }

  /** Whether the server knows OBJECTS_AS_TEXT; while it cannot be asked, no (asked again at the next insert). */
  private readsObjectsAsText(): Promise<boolean> {
    this.objectsAsText ??= (async () => {
      const result = await this.client.query({
        query: 'SELECT count() AS n FROM system.settings WHERE name = {name:String}', query_params: { name: OBJECTS_AS_TEXT }, format: 'JSONEachRow',
      });
      const rows = (await result.json()) as { n: number | string }[];
      return Number(rows[0]?.n ?? 0) > 0;
    })().catch(() => {
      this.objectsAsText = null;
      return false;
    });
    return this.objectsAsText;
  }

  /** Deletes events as Quill deleted them; waits for the mutation (on every replica). Repeating it is harmless. */
  async deleteEvents(deletion: EventDeletion): Promise<void> {
    await this.client.command({ query: deletionStatement(this.target, deletion), clickhouse_settings: { mutations_sync: this.target.cluster ? '2' : '1' } });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** The message of a failure for logs and stats: ClickHouse's own text when it answered, else the network error. */
export function failureText(error: unknown): string {
  const text = String((error as Error)?.message ?? error);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
