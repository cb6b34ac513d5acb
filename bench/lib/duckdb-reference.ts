/**
 * DuckDB (a devDependency, never part of Quill) as the reference the analytics tests and benchmark compare Quill's
 * answers and times against: the dataset's reference rows in one in-memory table, queried with plain SQL.
 */
import { DuckDBInstance, DuckDBConnection, timestampValue } from '@duckdb/node-api';
import type { ReferenceRow } from './analytics-dataset.js';

export class DuckReference {
  private constructor(readonly instance: DuckDBInstance, readonly db: DuckDBConnection) {}

  static async open(threads = 2): Promise<DuckReference> {
    const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
    const db = await instance.connect();
    await db.run(`CREATE TABLE events_raw (ts TIMESTAMP, event VARCHAR, distinct_id VARCHAR, device INTEGER, browser VARCHAR,
      url VARCHAR, session VARCHAR, price DOUBLE, plan VARCHAR, company VARCHAR, chain VARCHAR)`);
    return new DuckReference(instance, db);
  }

  async append(rows: readonly ReferenceRow[]): Promise<void> {
    const appender = await this.db.createAppender('events_raw');
    for (const r of rows) {
      appender.appendTimestamp(timestampValue(BigInt(r.ts) * 1000n));
      appender.appendVarchar(r.event);
      appender.appendVarchar(r.distinctId);
      appender.appendInteger(r.device);
      appender.appendVarchar(r.browser);
      if (r.url === null) appender.appendNull();
      else appender.appendVarchar(r.url);
      appender.appendVarchar(r.session);
      if (r.price === null) appender.appendNull();
      else appender.appendDouble(r.price);
      appender.appendVarchar(r.plan);
      if (r.company === null) appender.appendNull();
      else appender.appendVarchar(r.company);
      if (r.chain === null) appender.appendNull();
      else appender.appendVarchar(r.chain);
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
  }

  /**
   * Builds the `events` table the queries read: the appended rows with each device's final person (known only
   * once the whole dataset is generated).
   */
  async finish(devices: number, personOfDevice: (device: number) => number): Promise<void> {
    await this.db.run('CREATE TABLE device_person (device INTEGER, person INTEGER)');
    const appender = await this.db.createAppender('device_person');
    for (let d = 0; d < devices; d++) {
      appender.appendInteger(d);
      appender.appendInteger(personOfDevice(d));
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
    await this.db.run(`CREATE TABLE events AS SELECT e.ts, e.event, e.distinct_id, p.person, e.browser, e.url, e.session, e.price,
      e.plan, e.company, e.chain FROM events_raw e JOIN device_person p USING (device) ORDER BY e.ts`);
    await this.db.run('DROP TABLE events_raw');
  }

  /** The `persons` table: each person's created_at (epoch ms). */
  async appendPersons(rows: readonly [number, number][]): Promise<void> {
    await this.db.run('CREATE TABLE persons (person INTEGER, created_at TIMESTAMP)');
    const appender = await this.db.createAppender('persons');
    for (const [person, createdAt] of rows) {
      appender.appendInteger(person);
      appender.appendTimestamp(timestampValue(BigInt(createdAt) * 1000n));
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
  }

  /** Rows of a query as plain objects (BIGINTs as numbers, timestamps as epoch ms). */
  async rows(sql: string): Promise<Record<string, unknown>[]> {
    const reader = await this.db.runAndReadAll(sql);
    return reader.getRowObjectsJS().map((row) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(row)) out[k] = typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.getTime() : v;
      return out;
    });
  }

  /** Milliseconds the query takes (the result is read in full). */
  async time(sql: string): Promise<{ ms: number; rows: Record<string, unknown>[] }> {
    const started = performance.now();
    const rows = await this.rows(sql);
    return { ms: performance.now() - started, rows };
  }

  close(): void {
    this.db.closeSync();
    this.instance.closeSync();
  }
}
