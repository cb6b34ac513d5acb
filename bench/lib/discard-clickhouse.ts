/**
 * A ClickHouse stand-in that accepts every statement and insert and keeps nothing, for measuring what the export
 * costs Quill alone, as when ClickHouse runs on another machine (bench/export.bench.ts, QUILL_BENCH_EXPORT_SINK=
 * discard). It answers the schema-version query with the current version (so no tables are created), reads each
 * request body to its end, and counts the rows of inserts (lines of JSONEachRow) for the bench to check.
 *
 *   node dist/bench/lib/discard-clickhouse.js     prints `listening <port>`; GET /_rows answers the count
 */
import { createServer } from 'node:http';
import { SCHEMA_VERSION } from '../../src/stores/clickhouse/schema.js';

const rows: Record<string, number> = {};

const server = createServer((req, res) => {
  res.on('error', () => {});
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/ping') {
    res.end('Ok.\n');
    return;
  }
  if (url.pathname === '/_rows') {
    res.end(JSON.stringify(rows));
    return;
  }
  const query = url.searchParams.get('query');
  let lines = 0;
  let text = '';
  req.on('data', (chunk: Buffer) => {
    if (query !== null) {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    } else text += chunk;
  });
  req.on('error', () => res.destroy());
  req.on('end', () => {
    if (query !== null) {
      const table = /INSERT INTO\s+([\w.]+)/i.exec(query)?.[1] ?? '?';
      rows[table] = (rows[table] ?? 0) + lines;
      res.end('');
    } else if (/quill_schema_version/.test(text) && /^\s*SELECT/i.test(text)) {
      res.end(`${JSON.stringify({ v: SCHEMA_VERSION })}\n`);
    } else if (/system\.settings/.test(text) && /^\s*SELECT/i.test(text)) {
      // The settings the export asks about are known, as on any recent ClickHouse.
      res.end(`${JSON.stringify({ n: 1 })}\n`);
    } else res.end('');
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
