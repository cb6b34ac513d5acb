// The standing fuzz matrix: every route of the route table, and the paths outside it, get a seeded
// corpus of malformed bodies, queries, headers, path segments and encodings (test/helpers/fuzz.ts), while valid
// capture requests run beside them. Pass: no 5xx but a 503, every error body in the `{type, code, detail, attr}`
// shape, the process never exits (nor leans on its last-resort exception handler), `/_health` answers afterwards,
// and every event acknowledged to the valid requests is stored.
//
// QUILL_FUZZ_SEED=<n> replays a run (the seed is printed at the start and in every failure); QUILL_FUZZ_CASES=<n>
// sets the cases per route (default 5, which keeps the file to a few seconds; raise it for a long run).
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { ROUTES } from '../../src/front/routes.js';
import { fuzzBody, fuzzQuery, fuzzSegment, Random, rawRequest, type RawResponse } from '../helpers/fuzz.js';
import { allEvents } from '../helpers/ingest.js';
import { Client, PERSONAL_KEY, PROJECT_KEY, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';

const SEED = process.env.QUILL_FUZZ_SEED ? Number(process.env.QUILL_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const CASES = Number(process.env.QUILL_FUZZ_CASES ?? 5);
const MAX_BODY_MB = 4;
const IN_FLIGHT = 4;
const REPLAY = `seed ${SEED} (replay: QUILL_FUZZ_SEED=${SEED})`;

let q: QuillProcess;
t.before(async () => {
  t.comment(`fuzz ${REPLAY}, ${CASES} cases per route`);
  q = await startQuill({ env: { QUILL_MAX_BODY_MB: String(MAX_BODY_MB) } });
});
t.teardown(async () => {
  await q.stop();
  removeDir(q.dataDir);
});

interface FuzzCase {
  label: string;
  method: string;
  target: string | Buffer;
  headers: [string, string][];
  body: Buffer;
  /**
   * Not valid HTTP (an unknown method, raw bytes or spaces in the target, headers past uWS' 4 KB): uWS' parser may
   * close the connection without an answer; the server must live on.
   */
  protocol?: boolean;
}

/** Requests uWS' own HTTP parser refuses. */
const PROTOCOL_CASES: FuzzCase[] = [
  { label: 'unknown method', method: 'BREW', target: '/capture/', headers: [], body: Buffer.alloc(0), protocol: true },
  { label: 'space in the target', method: 'GET', target: '/api/projects/@current/persons/ x/', headers: [], body: Buffer.alloc(0), protocol: true },
  { label: 'raw invalid UTF-8 in the target', method: 'GET', target: Buffer.from([0x2f, 0x61, 0x70, 0x69, 0x2f, 0xff, 0xc3, 0x28]), headers: [], body: Buffer.alloc(0), protocol: true },
  { label: 'headers past 4 KB', method: 'GET', target: '/api/users/@me/', headers: [['authorization', `Bearer ${'x'.repeat(8000)}`]], body: Buffer.alloc(0), protocol: true },
  { label: 'control bytes in a header', method: 'POST', target: '/capture/', headers: [['content-type', 'a\u0001b']], body: Buffer.from('{}'), protocol: true },
];

/** Keeps a request's target and headers within what uWS parses (4 KB of request head). */
const MAX_TARGET = 2500;

const OTHER_PATHS = ['/', '/nope', '/api', '/api/projects/@current/unknown/', '/static/array.js', '/s/', '//capture', '/capture/../_stats', '/%00'];
const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'];

function targetOf(r: Random, pattern: string): string {
  return pattern.split('/').map((seg) => {
    if (!seg.startsWith(':')) return seg;
    if ((seg === ':project_id' || seg === ':organization_id') && r.chance(0.85)) return '@current';
    if (seg === ':token' && r.chance(0.5)) return PROJECT_KEY;
    return fuzzSegment(r);
  }).join('/') + (r.chance(0.5) ? '/' : '');
}

function authOf(r: Random): [string, string][] {
  if (r.chance(0.8)) return [['authorization', `Bearer ${PERSONAL_KEY}`]];
  return [['authorization', r.pick(['', 'Bearer', `Bearer ${PROJECT_KEY}`, 'Bearer phx_' + 'x'.repeat(1000), 'Basic Zm9vOmJhcg==', 'Bearer \u00ff\u00fe', `bearer ${PERSONAL_KEY}`])]];
}

/** OFREP's key headers: the project key as Bearer or X-API-Key, and broken ones. */
function keyHeaderOf(r: Random): [string, string][] {
  if (r.chance(0.7)) return [r.pick([['authorization', `Bearer ${PROJECT_KEY}`], ['x-api-key', PROJECT_KEY]] as [string, string][])];
  return [[r.pick(['authorization', 'x-api-key']), r.pick(['', 'Bearer', 'phc_nope', `Bearer ${PERSONAL_KEY}`, 'x'.repeat(1000), '\u00ff\u00fe'])]];
}

function corpus(r: Random): FuzzCase[] {
  const cases: FuzzCase[] = [];
  const maxBody = MAX_BODY_MB * 1024 * 1024;
  for (const route of ROUTES) {
    for (let i = 0; i < CASES; i++) {
      const method = r.chance(0.05) ? r.pick(METHODS) : route.method;
      let query = fuzzQuery(r, PROJECT_KEY);
      while (query.length > MAX_TARGET) query = query.slice(0, query.lastIndexOf('&') > 0 ? query.lastIndexOf('&') : MAX_TARGET);
      const headers: [string, string][] = route.auth === 'personal' ? authOf(r) : route.keyHeader ? keyHeaderOf(r) : [];
      if (r.chance(0.2)) headers.push(['x-forwarded-for', r.pick(['1.2.3.4', 'garbage', '::1, 2.2.2.2', '\u00ff', ''])]);
      let body = Buffer.alloc(0);
      let note = 'no body';
      if (route.body !== 'none' && method !== 'GET' && method !== 'HEAD') {
        const b = fuzzBody(r, route.body === 'raw' ? 'raw' : 'json', PROJECT_KEY, maxBody);
        body = b.bytes;
        note = b.note;
        headers.push(...b.headers);
        if (r.chance(0.1)) headers.push(['content-encoding', r.pick(['br', 'deflate', 'gzip, identity', 'x-nope'])]);
      }
      const target = targetOf(r, route.path) + (query ? `?${query}` : '');
      cases.push({ label: `${method} ${route.path} [${note}] ${target.slice(0, 120)}`, method, target, headers, body });
    }
  }
  for (const path of OTHER_PATHS) {
    const b = fuzzBody(r, 'raw', PROJECT_KEY, maxBody);
    cases.push({ label: `${path} [${b.note}]`, method: r.pick(METHODS), target: path, headers: b.headers, body: b.bytes });
  }
  // Spread the requests uWS refuses through the run, so the server keeps serving around them.
  for (const c of PROTOCOL_CASES) cases.splice(r.int(0, cases.length), 0, c);
  return cases;
}

/** What is wrong with an answer, or null. */
function verdict(res: RawResponse): string | null {
  if (!Number.isInteger(res.status)) return 'no status line';
  if (res.status >= 500 && res.status !== 503) return `status ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`;
  if (res.status < 400 || res.status === 304) return null;
  if (res.body.length === 0) return null; // PostHog answers some errors with an empty body (flag DELETE: 405)
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body.toString('utf8'));
  } catch {
    return `status ${res.status} with a body that is not JSON: ${res.body.toString('utf8').slice(0, 200)}`;
  }
  // The four fields of PostHog's error body; a few PostHog endpoints add fields of their own (src/protocol/errors.ts).
  const e = parsed as Record<string, unknown>;
  const shaped = e !== null && typeof e === 'object' && !Array.isArray(e) && ['type', 'code', 'detail', 'attr'].every((k) => k in e) &&
    typeof e.type === 'string' && typeof e.code === 'string' && typeof e.detail === 'string' && (e.attr === null || typeof e.attr === 'string');
  return shaped ? null : `status ${res.status} with a body not in the error shape: ${res.body.toString('utf8').slice(0, 200)}`;
}

/** Valid capture requests sent all through the fuzz: every uuid acknowledged with a 200 must be stored. */
function witnesses(base: string) {
  const acked = new Map<string, string>();
  let running = true;
  let failures = 0;
  const loop = (async () => {
    for (let round = 0; running; round++) {
      const distinctId = `witness-${round % 4}`;
      const events = Array.from({ length: 1 + (round % 5) }, (_, i) => ({ event: 'witness', distinct_id: distinctId, uuid: randomUUID(), properties: { round, i } }));
      const gz = round % 3 === 0;
      const payload = JSON.stringify(round % 2 === 0 ? { api_key: PROJECT_KEY, batch: events } : { api_key: PROJECT_KEY, ...events[0] });
      const sent = round % 2 === 0 ? events : events.slice(0, 1);
      try {
        const res = await fetch(`${base}${round % 2 === 0 ? '/batch/' : '/capture/'}`, {
          method: 'POST',
          body: gz ? gzipSync(payload) : payload,
          headers: gz ? { 'content-encoding': 'gzip' } : { 'content-type': 'application/json' },
        });
        await res.arrayBuffer();
        if (res.status === 200) for (const e of sent) acked.set(e.uuid, distinctId);
        else if (res.status !== 503) failures++;
      } catch {
        failures++;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    acked,
    failures: () => failures,
    async stop() {
      running = false;
      await loop;
    },
  };
}

t.test(`fuzz every route (${REPLAY})`, async (t) => {
  const r = new Random(SEED);
  const cases = corpus(r);
  const witness = witnesses(q.base);
  const problems: string[] = [];
  let next = 0;
  const statuses = new Map<number, number>();
  const slow: string[] = [];
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      const started = Date.now();
      try {
        // uWS keeps a connection it will not parse open until its ~10 s idle timeout: do not wait for that.
        const res = await rawRequest(q.port, c.method, c.target, c.headers, c.body, c.protocol ? 1000 : 30_000);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const wrong = verdict(res);
        if (wrong) problems.push(`${c.label}: ${wrong}`);
      } catch (error) {
        if (!c.protocol) problems.push(`${c.label}: ${(error as Error).message}`);
      }
      if (Date.now() - started > 2000) slow.push(`${c.label}: ${Date.now() - started} ms`);
    }
  }));
  await witness.stop();
  if (slow.length > 0) t.comment(`slow: ${slow.join('; ')}`);
  t.comment(`${cases.length} fuzz requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}; ${witness.acked.size} witness events acknowledged`);

  t.same(problems, [], `every answer is a non-5xx (or 503) with a well-formed error body (${REPLAY})`);
  t.equal(q.proc.exitCode, null, `the process is running (${REPLAY})`);
  t.equal((await fetch(`${q.base}/_health`)).status, 200, `/_health answers (${REPLAY})`);
  t.equal(witness.failures(), 0, `valid requests beside the fuzz were answered 200 or 503 (${REPLAY})`);
  t.ok(witness.acked.size > 0, 'valid requests were acknowledged during the fuzz');

  const api = new Client(q.base);
  const counters = (await api.get('/_stats')).body;
  t.comment(`dropped ${JSON.stringify(counters.dropped)}; dead letters ${JSON.stringify(counters.shards.map((s: any) => s.deadLetters))}`);
  const stored = new Map<string, number>();
  for (const distinctId of new Set(witness.acked.values())) {
    for (const e of await allEvents(api, `distinct_id=${distinctId}&event=witness`)) stored.set(e.id, (stored.get(e.id) ?? 0) + 1);
  }
  const lost = [...witness.acked.keys()].filter((uuid) => stored.get(uuid) !== 1);
  t.same(lost, [], `every acknowledged witness event is stored exactly once (${REPLAY})`);
  const leaned = q.output().split('\n').filter((line) => /uncaught exception|unhandled rejection \(Quill keeps serving\)|died \(/.test(line));
  t.same(leaned, [], `no exception reached the last-resort handler, no worker died (${REPLAY})`);
});
