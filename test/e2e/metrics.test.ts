// GET /metrics: Prometheus text that parses, series that move with traffic, a crashed worker visible in the
// metrics and in the logs, and the token / separate-port protection.
import { connect } from 'node:net';
import t from 'tap';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { Client, logLines, PROJECT_KEY, quillForFile, removeDir, startQuill } from '../helpers/quill.js';
import { eventually } from '../helpers/eventually.js';

const TOKEN = 'metrics-token-0123456789';
const server = quillForFile(t, { env: { QUILL_METRICS_TOKEN: TOKEN, QUILL_FAULT_INJECTION: '1', QUILL_ACCESS_LOG: '1' } });

interface Family { type: string; help: string; samples: { name: string; labels: Record<string, string>; value: number }[] }

/**
 * A strict reader of the text exposition format (version 0.0.4): every line is a HELP, a TYPE or a sample of a
 * family declared before it; label values are quoted and escaped; values are numbers (or +Inf/NaN).
 */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (sample: string, type: string) =>
    type === 'histogram' ? sample.replace(/_(bucket|sum|count)$/, '') : sample;
  let current: string | null = null;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (m) {
      current = m[1]!;
      families.set(current, { type: '', help: m[2]!, samples: [] });
      continue;
    }
    m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m) {
      if (m[1] !== current) throw new Error(`TYPE without HELP: ${line}`);
      families.get(current)!.type = m[2]!;
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.eE+-]+|\+Inf|-Inf|NaN)$/.exec(line);
    if (!m) throw new Error(`not a valid exposition line: ${line}`);
    const family = current ? families.get(current)! : null;
    if (!family || familyOf(m[1]!, family.type) !== current) throw new Error(`sample outside its family: ${line}`);
    const labels: Record<string, string> = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/gy;
      let consumed = 0;
      for (let lm; (lm = re.exec(m[3])); consumed = re.lastIndex) labels[lm[1]!] = lm[2]!;
      if (consumed !== m[3].length) throw new Error(`bad labels: ${line}`);
    }
    family.samples.push({ name: m[1]!, labels, value: Number(m[4]) });
  }
  return families;
}

async function scrape(base: string, token: string | null = TOKEN) {
  const res = await fetch(`${base}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), text, families: res.status === 200 ? parseExposition(text) : new Map<string, Family>() };
}

/** Sum of the samples named `name` whose labels include `labels`. */
function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const f of families.values()) {
    for (const s of f.samples) if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) total += s.value;
  }
  return total;
}

t.test('the exposition parses, and counters move with traffic', async (t) => {
  const before = await scrape(server.q.base);
  t.equal(before.status, 200);
  t.match(before.contentType, /^text\/plain; version=0\.0\.4/);
  for (const name of ['quill_http_requests_total', 'quill_http_request_duration_seconds', 'quill_events_acknowledged_total', 'quill_events_applied_total',
    'quill_events_dropped_total', 'quill_ingest_backlog_events', 'quill_ingest_apply_lag_seconds', 'quill_ingest_log_fsync_seconds', 'quill_lmdb_bytes',
    'quill_worker_restarts_total', 'quill_worker_up', 'quill_insight_query_duration_seconds', 'process_resident_memory_bytes']) {
    t.ok(before.families.has(name), `${name} is exposed`);
  }
  t.equal(value(before.families, 'quill_worker_up'), 2, 'both workers answered');
  t.ok(value(before.families, 'quill_lmdb_bytes', { env: 'meta' }) > 0, 'LMDB sizes');

  const batches = 5;
  for (let i = 0; i < batches; i++) t.equal((await sendBatch(server.q.base, Array.from({ length: 10 }, (_, k) => event(`metrics-${k}`, 'metrics event')))).status, 200);
  const refused = await sendBatch(server.q.base, [{ event: 'no distinct id', properties: {} }, event('metrics-0', 'metrics event')]);
  t.equal(refused.status, 200);
  t.equal((await storedEvents(server.api, 'metrics-0')).length, batches + 1, 'applied');
  t.equal((await new Client(server.q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'metrics-0' })).status, 200);
  t.equal((await server.api.get('/api/projects/@current/insights/trend/?events=[{"id":"metrics event"}]')).status, 200);

  const after = await scrape(server.q.base);
  const delta = (name: string, labels: Record<string, string> = {}) => value(after.families, name, labels) - value(before.families, name, labels);
  t.equal(delta('quill_http_requests_total', { route: '/batch', method: 'POST', status: '200' }), batches + 1);
  t.equal(delta('quill_http_request_duration_seconds_count', { endpoint: 'capture' }), batches + 1);
  t.equal(delta('quill_http_request_duration_seconds_count', { endpoint: 'flags' }), 1);
  t.equal(delta('quill_events_acknowledged_total'), batches * 10 + 1);
  t.equal(delta('quill_events_applied_total'), batches * 10 + 1);
  t.equal(delta('quill_events_dropped_total', { reason: 'missing_distinct_id' }), 1);
  t.equal(delta('quill_insight_query_duration_seconds_count', { query: 'insights.trend' }), 1);
  t.ok(delta('quill_ingest_log_fsync_seconds_count') >= 1, 'fdatasyncs are counted');
  t.equal(delta('quill_http_requests_total', { route: '/metrics', method: 'GET', status: '200' }), 1, 'the previous scrape is counted');
  // Memory by component and worker: the heap, and within it what the caches and the open blocks hold.
  for (const worker of ['0', '1']) {
    t.ok(value(after.families, 'quill_memory_bytes', { component: 'heap_used', worker }) > 1e6, `worker ${worker}: its heap`);
    for (const component of ['heap_total', 'external', 'hot_persons', 'open_blocks', 'column_cache', 'part_queue']) {
      t.ok(value(after.families, 'quill_memory_bytes', { component, worker }) >= 0, `worker ${worker}: ${component}`);
    }
  }
  const sum = (component: string) => value(after.families, 'quill_memory_bytes', { component, worker: '0' }) + value(after.families, 'quill_memory_bytes', { component, worker: '1' });
  t.ok(sum('open_blocks') > 0, 'the events applied sit in open blocks');
  t.ok(sum('hot_persons') > 0, 'their persons in the hot-persons cache');

  // QUILL_ACCESS_LOG=1: one JSON line per request, the path without its query.
  const requests = await eventually('access log lines', () => {
    const lines = logLines(server.q.output()).filter((l) => l.event === 'request' && l.route === '/api/projects/:project_id/insights/trend');
    return lines.length > 0 ? lines : null;
  });
  t.match(requests[0], { level: 30, component: 'front', method: 'GET', path: '/api/projects/@current/insights/trend/', status: 200, ms: Number });
  // A method no route has (fetch will not send TRACE: a raw request) is counted, under one shared label.
  const traced = await new Promise<string>((resolve, reject) => {
    const socket = connect(server.q.port, '127.0.0.1', () => socket.write('TRACE /anything HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(String(d).split('\r\n')[0]!);
    });
    socket.once('error', reject);
  });
  t.equal(traced, 'HTTP/1.1 404 Not Found');
  const later = await scrape(server.q.base);
  t.notOk(later.text.includes('method="TRACE"'), 'an unusual method is not a label value of its own');
  t.match(later.text, /quill_http_requests_total\{route="unmatched",method="other",status="404"\} 1/, 'it is counted as another method');
});

t.test('a crashed worker shows in the metrics and in the logs', async (t) => {
  const res = await fetch(`${server.q.base}/_fault/crash`, { method: 'POST' });
  t.equal(res.status, 202);
  const { crashing } = (await res.json()) as { crashing: number };
  const families = await eventually('the restart in /metrics', async () => {
    const s = await scrape(server.q.base);
    return value(s.families, 'quill_worker_restarts_total', { worker: String(crashing) }) === 1 && value(s.families, 'quill_worker_up') === 2 ? s.families : null;
  });
  t.equal(value(families, 'quill_worker_restarts_total'), 1, 'one restart, of that worker');
  const crash = logLines(server.q.output()).find((l) => l.event === 'worker_crash');
  t.match(crash, { level: 50, component: 'front', worker: crashing, msg: new RegExp(`^worker ${crashing} died`) });
});

t.test('/metrics needs the token; QUILL_METRICS_PORT moves it off the public port', async (t) => {
  t.equal((await scrape(server.q.base, null)).status, 401);
  t.equal((await scrape(server.q.base, 'wrong-token-0123456789')).status, 401);
  const own = await startQuill({ env: { QUILL_METRICS_PORT: '0' } });
  t.teardown(async () => {
    await own.stop();
    removeDir(own.dataDir);
  });
  const start = logLines(own.output()).find((l) => l.event === 'start');
  const port = start?.metrics_port as number;
  t.ok(port > 0 && port !== own.port, 'a port of its own');
  t.equal((await scrape(own.base, null)).status, 404, 'not on the public port');
  const scraped = await scrape(`http://127.0.0.1:${port}`, null);
  t.equal(scraped.status, 200, 'open on its own port when no token is set');
  t.equal(value(scraped.families, 'quill_worker_up'), 2);
  t.equal((await fetch(`http://127.0.0.1:${port}/api/users/@me/`)).status, 404, 'and nothing else there');
});
