// HEAD is answered wherever GET is (src/front/front.ts `handle`, src/http/exchange.ts `send`): the same status and
// headers, Content-Length included, and no body. Each HEAD is followed by its GET on the same keep-alive connection,
// so a body sent after a HEAD's head (what uWS does by itself) would be read as the start of the GET's answer, and
// a HEAD that left the connection unusable (uWS' `endWithoutBody(length)`) would get the GET no answer.
// Covers every GET route of the route table, the posthog-js bundles, the console, /_health, /metrics, 404s and
// 304s, and the flag stream (its head, then the end).
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import t from 'tap';
import { ROUTES } from '../../src/front/routes.js';
import { PERSONAL_KEY, PROJECT_KEY, ROOT, quillForFile } from '../helpers/quill.js';

const METRICS_TOKEN = 'head-requests-metrics-token';
const server = quillForFile(t, { env: { QUILL_METRICS_TOKEN: METRICS_TOKEN } });
const VERSION: string = JSON.parse(readFileSync(`${ROOT}/node_modules/posthog-js/package.json`, 'utf8')).version;

interface Answer {
  status: number;
  /** Header lines in order, names lower-cased, without Date (it may tick between the two answers). */
  headers: [string, string][];
  body: Buffer;
}

/** One answer's head at the start of `bytes`: [answer without body, bytes after the head]; null if incomplete. */
function headAt(bytes: Buffer): [Answer, Buffer] | null {
  const split = bytes.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const lines = bytes.subarray(0, split).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0]!);
  if (!m) throw new Error(`not a status line: ${JSON.stringify(lines[0]!.slice(0, 80))}`);
  const headers = lines.slice(1).map((l): [string, string] => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]);
  return [{ status: Number(m[1]), headers: headers.filter(([k]) => k !== 'date'), body: Buffer.alloc(0) }, bytes.subarray(split + 4)];
}

const header = (a: Answer, name: string) => a.headers.find(([k]) => k === name)?.[1];

/**
 * Sends `HEAD target`, then, once its head arrived, `GET target` on the same connection (not pipelined: uWS closes
 * a connection whose next request arrives while an answer is pending), and reads both answers: the HEAD's head,
 * which must be followed at once by the GET's status line, then the GET's body (Content-Length bytes; a stream's
 * first chunk).
 */
function headThenGet(target: string, headers: Record<string, string> = {}): Promise<{ head: Answer; get: Answer }> {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const request = (method: string) => `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.q.port}\r\n${lines}\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(server.q.port, '127.0.0.1');
    let bytes = Buffer.alloc(0);
    const timer = setTimeout(() => done(new Error(`${target}: no complete answers within 20 s (${bytes.length} bytes)`)), 20_000);
    let settled = false;
    const done = (outcome: Error | { head: Answer; get: Answer }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    socket.on('error', (e) => done(e));
    socket.on('close', () => done(new Error(`${target}: the connection closed (${bytes.length} bytes read)`)));
    let sentGet = false;
    socket.on('data', (d) => {
      bytes = Buffer.concat([bytes, d]);
      try {
        const first = headAt(bytes);
        if (!first) return;
        if (!sentGet) {
          sentGet = true;
          socket.write(request('GET'));
        }
        const second = headAt(first[1]);
        if (!second) return;
        const [get, rest] = second;
        const length = header(get, 'content-length');
        if (length !== undefined) {
          if (rest.length < Number(length)) return;
          get.body = rest.subarray(0, Number(length));
        } else if (header(get, 'transfer-encoding') === 'chunked') {
          if (rest.length === 0) return;
          get.body = rest;
        }
        done({ head: first[0], get });
      } catch (error) {
        done(new Error(`${target}: ${(error as Error).message} (a body after the HEAD's head?)`));
      }
    });
    socket.write(request('HEAD'));
  });
}

/** The HEAD answers as the GET: status, headers and their values (`sameLength`: Content-Length too). */
function sameAnswer(t: Tap.Test, label: string, head: Answer, get: Answer, sameLength = true): void {
  const strip = (a: Answer) => a.headers.filter(([k]) => sameLength || k !== 'content-length').map(([k, v]) => `${k}: ${v}`).sort();
  t.equal(head.status, get.status, `${label}: status ${get.status}`);
  t.same(strip(head), strip(get), `${label}: the GET's headers`);
  if (get.status !== 304 && get.status !== 204 && !header(get, 'transfer-encoding')) {
    t.ok(header(head, 'content-length') !== undefined, `${label}: Content-Length on the HEAD`);
  }
}

/** A path for a route pattern: the current project and organization, the project key, a made-up id. */
function pathOf(pattern: string): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => (name === 'project_id' || name === 'organization_id' ? '@current' : name === 'token' ? PROJECT_KEY : '1')) + '/';
}

t.test('every GET route of the route table answers HEAD as it answers GET, without a body', async (t) => {
  const auth = { authorization: `Bearer ${PERSONAL_KEY}` };
  // Capture's GET routes store events: their HEAD is checked below.
  const routes = ROUTES.filter((r) => r.method === 'GET' && r.op !== 'flags.stream' && !r.recordsIp);
  t.ok(routes.length > 60, `${routes.length} GET routes`);
  const statuses = new Set<number>();
  for (const route of routes) {
    const query = route.projectFrom ? `?token=${PROJECT_KEY}` : '';
    const { head, get } = await headThenGet(pathOf(route.path) + query, route.auth === 'personal' ? auth : {});
    // Answers computed afresh (statistics, query timings) may differ in length between the two requests.
    const stable = route.auth === 'none' || route.auth === 'public' || get.status >= 400;
    sameAnswer(t, `${route.path} (${route.op})`, head, get, stable);
    statuses.add(get.status);
  }
  t.ok(statuses.has(200) && [...statuses].some((s) => s >= 400), `200s and errors among them: ${[...statuses].sort().join(', ')}`);
});

t.test('a HEAD on a capture GET route answers without storing anything (HEAD is safe)', async (t) => {
  const data = encodeURIComponent(Buffer.from(JSON.stringify({ api_key: PROJECT_KEY, event: 'head-probe', distinct_id: 'head-1' })).toString('base64'));
  const res = await fetch(`${server.q.base}/e/?data=${data}`, { method: 'HEAD' });
  t.equal(res.status, 200);
  t.equal(await res.text(), '', 'no body');
  const get = await fetch(`${server.q.base}/e/?data=${data}`);
  t.equal(get.status, 200, 'the GET stores it');
  const count = await fetch(`${server.q.base}/api/projects/@current/query/`, {
    method: 'POST', headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query: "SELECT count() FROM events WHERE event = 'head-probe'" } }),
  }).then((r) => r.json()) as { results: number[][] };
  t.same(count.results, [[1]], 'once: the HEAD stored nothing');
});

t.test('the posthog-js bundles, with their ETag, gzip and 304', async (t) => {
  for (const target of ['/static/array.js', `/static/${VERSION}/surveys.js`, '/static/nope.js']) {
    const { head, get } = await headThenGet(target);
    sameAnswer(t, target, head, get);
  }
  const plain = await headThenGet('/static/array.js');
  t.equal(plain.head.status, 200, 'HEAD /static/array.js is a 200 (it was a 404)');
  t.equal(header(plain.head, 'content-length'), String(readFileSync(`${ROOT}/node_modules/posthog-js/dist/array.js`).length), "the bundle's length");
  const zipped = await headThenGet('/static/array.js', { 'accept-encoding': 'gzip' });
  sameAnswer(t, 'array.js gzipped', zipped.head, zipped.get);
  t.equal(header(zipped.head, 'content-encoding'), 'gzip');
  const etag = header(plain.get, 'etag')!;
  const again = await headThenGet('/static/array.js', { 'if-none-match': etag });
  t.equal(again.head.status, 304);
  sameAnswer(t, 'array.js revalidated', again.head, again.get);
});

t.test('the console, /_health, /metrics and unknown paths', async (t) => {
  const index = await headThenGet('/console/');
  const script = /src="\/console\/([^"]+\.js)"/.exec(index.get.body.toString())?.[1];
  t.ok(script, 'the page names its script');
  const cases: [string, Record<string, string>][] = [
    ['/console/', {}],
    ['/console/project/1/persons', { 'accept-encoding': 'br, gzip' }],
    [`/console/${script}`, { 'accept-encoding': 'br' }],
    ['/console/missing.js', {}],
    ['/', { accept: 'text/html' }],
    ['/nope', {}],
    ['/api/projects/@current/feature_flags/', {}],
  ];
  for (const [target, headers] of cases) {
    const { head, get } = await headThenGet(target, headers);
    sameAnswer(t, target, head, get);
  }
  const health = await headThenGet('/_health');
  sameAnswer(t, '/_health', health.head, health.get, false);
  t.equal(health.head.status, 200);
  const metrics = await headThenGet('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
  sameAnswer(t, '/metrics', metrics.head, metrics.get, false);
  t.equal(metrics.head.status, 200);
});

t.test('the flag stream: its head, and the HEAD ends there', async (t) => {
  const target = `/flags/stream?token=${PROJECT_KEY}`;
  for (const headers of [{ authorization: `Bearer ${PERSONAL_KEY}` }, {}]) {
    const { head, get } = await headThenGet(target, headers);
    sameAnswer(t, `flag stream${headers.authorization ? ' (server)' : ' (browser)'}`, head, get);
    t.equal(head.status, 200);
    t.equal(header(head, 'content-type'), 'text/event-stream; charset=utf-8');
    t.match(get.body.toString(), /retry: 1000/, "the GET that followed got the stream's first chunk");
  }
  const refused = await headThenGet(target, { authorization: 'Bearer phx_nope' });
  sameAnswer(t, 'flag stream, bad key', refused.head, refused.get);
  t.equal(refused.head.status, 401);
});
