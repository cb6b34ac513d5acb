/**
 * ClickHouse's HTTP interface in front of chdb (ClickHouse in-process), for tests and benchmarks of the ClickHouse
 * export: Quill talks to it with the official client over HTTP exactly as it would to a server, and the test can
 * kill it (ClickHouse unavailable) and start it again on the same data directory.
 *
 *   node dist/bench/lib/clickhouse-shim.js <data dir> [port]     prints `listening <port>` once it serves
 *
 * Only what `@clickhouse/client` sends: the query in the `query` parameter or the body (an INSERT's rows follow the
 * query in the body), settings as URL parameters, `database`, `GET /ping`. Errors answer 500 with ClickHouse's text
 * and `X-ClickHouse-Exception-Code`, as a server does. One chdb session per process (chdb allows one engine).
 */
import { createServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';

interface ChdbSession {
  query(sql: string, format?: string): string;
  queryAsync?(sql: string, opts?: { format?: string }): Promise<{ bytes(): Uint8Array }>;
  cleanup?(): void;
}

const require = createRequire(import.meta.url);
const { Session } = require('chdb') as { Session: new (path: string) => ChdbSession };

/** URL parameters of the client that are not ClickHouse settings (or that have no meaning in-process). */
const NOT_SETTINGS = new Set([
  'query', 'database', 'query_id', 'session_id', 'session_timeout', 'session_check', 'default_format', 'user', 'password',
  'wait_end_of_query', 'send_progress_in_http_headers', 'http_headers_progress_interval_ms', 'enable_http_compression',
  'http_zlib_compression_level', 'role',
]);
const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The statements one HTTP request stands for: settings, the database, then the query (with an INSERT's rows). */
export function sqlOf(url: URL, body: string): { sql: string; format: string | undefined } {
  const params = url.searchParams;
  const inUrl = params.get('query');
  const query = inUrl === null ? body : body.length > 0 ? `${inUrl}\n${body}` : inUrl;
  const prefix: string[] = [];
  const settings: string[] = [];
  for (const [name, value] of params) {
    if (name.startsWith('param_')) {
      // Query parameters ({name:Type} in the query): chdb takes them as `SET param_<name>`, as clickhouse-client does.
      if (!SETTING_NAME.test(name)) throw new Error(`Code: 456. DB::Exception: Bad query parameter ${name}.`);
      prefix.push(`SET ${name} = ${quote(value)}`);
      continue;
    }
    if (NOT_SETTINGS.has(name)) continue;
    if (!SETTING_NAME.test(name)) throw new Error(`Code: 115. DB::Exception: Unknown setting ${name}. (UNKNOWN_SETTING)`);
    settings.push(`${name} = ${/^-?\d+(\.\d+)?$/.test(value) ? value : quote(value)}`);
  }
  const database = params.get('database');
  if (database) prefix.push(`USE ${database.replace(/[^A-Za-z0-9_]/g, '')}`);
  // One session serves every request: a SET would outlive its request. A read-only query (Quill's analytics) carries
  // its settings in its own SETTINGS clause, before the client's FORMAT; an insert's settings stay SETs as before.
  if (params.has('readonly') && settings.length > 0) {
    const format = /\s+FORMAT\s+\w+\s*$/i.exec(query);
    const body = format ? query.slice(0, format.index) : query;
    return { sql: [...prefix, `${body} SETTINGS ${settings.join(', ')}${format ? format[0] : ''}`].join(';\n'), format: params.get('default_format') ?? undefined };
  }
  for (const setting of settings) prefix.push(`SET ${setting}`);
  return { sql: [...prefix, query].join(';\n'), format: params.get('default_format') ?? undefined };
}

function main(): void {
  const [dir, portText] = process.argv.slice(2);
  if (!dir) throw new Error('usage: clickhouse-shim <data dir> [port]');
  const session = new Session(dir);
  // A query parameter reaches chdb as the text of a SET, which its max_query_size (256 KiB) bounds; ClickHouse's
  // HTTP interface substitutes parameters after parsing and bounds them only by the URL's 1 MiB.
  session.query('SET max_query_size = 2097152', 'TabSeparated');
  // One query at a time, in arrival order: chdb's session is not meant for concurrent statements.
  let chain: Promise<unknown> = Promise.resolve();
  // ClickHouse takes a URL of up to 1 MiB (http_max_uri_size), where the client puts query parameters (a static
  // cohort's members: src/domain/hogql/clickhouse-printer.ts); Node's default is 16 KiB of headers.
  const server = createServer({ maxHeaderSize: 1 << 20 }, (req, res) => {
    res.on('error', () => {}); // the client is gone; nothing to tell it
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/ping') {
      res.end('Ok.\n');
      return;
    }
    // A client that goes away mid-request (Quill killed during an insert) must not take the server down with it.
    readBody(req).catch(() => null).then((body) => {
      if (body === null) {
        res.destroy();
        return;
      }
      chain = chain.then(async () => {
        try {
          const { sql, format } = sqlOf(url, body);
          // As bytes where chdb offers them: its answer as one JavaScript string fails past V8's 512 MB string limit
          // (chdb: "Code: 1000 Unknown failure"), which the path rows of 10M events passed; a server has no such limit.
          const out = session.queryAsync
            ? (await session.queryAsync(sql, { format: format ?? 'TabSeparated' })).bytes()
            : session.query(sql, format ?? 'TabSeparated');
          res.setHeader('X-ClickHouse-Summary', '{}');
          res.end(out ?? '');
        } catch (error) {
          const text = String((error as Error)?.message ?? error);
          const code = /Code: (\d+)/.exec(text)?.[1] ?? '1000';
          process.stderr.write(`error ${code}: ${text.slice(0, 300)}\n`);
          // chdb hands what a failed query had already written (its format's header) to the next query's answer,
          // which then is not valid JSON (seen after memory limits: the next analyses failed to parse); a
          // throwaway query takes it instead.
          try {
            session.query('SELECT 1', 'TabSeparated');
          } catch {
            // nothing to take
          }
          res.statusCode = 500;
          res.setHeader('X-ClickHouse-Exception-Code', code);
          res.end(text.startsWith('Code:') ? text : `Code: ${code}. DB::Exception: ${text}`);
        }
      });
    });
  });
  // chdb's queries run synchronously on this thread, so a request that arrives during a long one is parsed only
  // after it; Node's default headersTimeout (60 s) then answered it 408 with an empty body, which Quill reported
  // as ClickHouse unavailable (lifecycle at 100M events sends its two queries together, each over a minute).
  // A ClickHouse server has no such limit on a queued query.
  server.headersTimeout = 0;
  server.requestTimeout = 0;
  server.listen(Number(portText ?? 0), '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : portText}\n`);
  });
  const stop = (): void => {
    server.close();
    session.cleanup?.();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) main();
