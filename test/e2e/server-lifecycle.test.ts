// Start-up, health, SIGTERM drain, restart on the same data directory, first-start credentials.
import t from 'tap';
import { Client, logLines, PERSONAL_KEY, PROJECT_KEY, removeDir, startQuill } from '../helpers/quill.js';

t.test('first start creates and prints credentials; restart keeps everything; SIGTERM exits 0', async (t) => {
  const q = await startQuill();
  t.teardown(() => removeDir(q.dataDir));
  t.match(q.output(), /First start: created an organization, a user, a project and their keys/);
  t.match(q.output(), new RegExp(PROJECT_KEY));
  t.match(q.output(), new RegExp(PERSONAL_KEY));

  const health = await fetch(`${q.base}/_health`);
  t.equal(health.status, 200);
  const body = await health.json();
  t.equal(body.status, 'ok');
  t.same(body.workers.map((w: { worker: number; stalled: boolean }) => [w.worker, w.stalled]), [[0, false], [1, false]], "each worker's watchdog figures");

  const api = new Client(q.base);
  const created = await api.post('/api/projects/@current/feature_flags/', { key: 'survives-restart', filters: { groups: [{ rollout_percentage: 30 }] } });
  t.equal(created.status, 201);
  t.equal(await q.stop('SIGTERM'), 0, 'SIGTERM drains and exits 0');

  const again = await startQuill({ dataDir: q.dataDir });
  t.teardown(() => again.stop());
  t.match(again.output(), /Using the existing data directory/);
  const flags = await new Client(again.base).get('/api/projects/@current/feature_flags/');
  t.equal(flags.status, 200);
  t.same(flags.body.results.map((f: { key: string }) => f.key), ['survives-restart']);
  t.equal(flags.body.results[0].filters.groups[0].rollout_percentage, 30);
});

t.test('generated keys when none are configured', async (t) => {
  const q = await startQuill({ env: { QUILL_PROJECT_API_KEY: '', QUILL_PERSONAL_API_KEY: '' } });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  // Not a terminal: the keys travel in the first-start log line (JSON), the only place they appear.
  const first = logLines(q.output()).find((l) => l.event === 'first_start');
  t.match(first, { level: 30, msg: /^First start/, project_api_key: /^phc_[A-Za-z0-9]{43}$/, personal_api_key: /^phx_[A-Za-z0-9]{43}$/ });
  const me = await new Client(q.base, first!.personal_api_key as string).get('/api/users/@me/');
  t.equal(me.status, 200);
  t.equal(me.body.team.api_token, first!.project_api_key);
});

t.test('unknown paths answer 404 with the error body, never a dropped connection', async (t) => {
  const q = await startQuill();
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const res = await fetch(`${q.base}/nope/at/all`);
  t.equal(res.status, 404);
  t.same(await res.json(), { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
  const method = await fetch(`${q.base}/api/users/@me/`, { method: 'PUT', headers: { authorization: `Bearer ${PERSONAL_KEY}` } });
  t.equal(method.status, 405);
  t.same(await method.json(), { type: 'invalid_request', code: 'method_not_allowed', detail: 'Method "PUT" not allowed.', attr: null });
  const preflight = await fetch(`${q.base}/batch/`, {
    method: 'OPTIONS', headers: { origin: 'http://example.test', 'access-control-request-headers': 'authorization,content-type' },
  });
  t.equal(preflight.status, 200);
  t.equal(preflight.headers.get('access-control-allow-origin'), 'http://example.test');
  t.equal(preflight.headers.get('access-control-allow-headers'), 'authorization,content-type');
  // The private API grants CORS to the console's origins only (test/e2e/private-cors.test.ts).
  const privatePreflight = await fetch(`${q.base}/api/projects/@current/feature_flags/`, {
    method: 'OPTIONS', headers: { origin: 'http://example.test', 'access-control-request-headers': 'authorization,content-type' },
  });
  t.equal(privatePreflight.status, 200);
  t.equal(privatePreflight.headers.get('access-control-allow-origin'), null);
});

t.test('in a terminal the generated password is printed once, in the banner', async (t) => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { spawn } = await import('node:child_process');
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-tty-'));
  t.teardown(() => removeDir(dataDir));
  // `script` gives the server a pseudo-terminal as its standard output.
  const command = `QUILL_PORT=0 QUILL_HOST=127.0.0.1 QUILL_DATA_DIR=${dataDir} QUILL_WORKERS=1 exec node dist/src/main.js`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner:\n${out}`)), 30_000);
    child.stdout.on('data', () => {
      if (/Console: .*with password/.test(out) && /Project API key/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const password = /with password (\S+)\)/.exec(out)![1]!;
  t.equal(out.split(password).length - 1, 1, 'the password appears once');
  t.match(out, /"event":"console"/, 'the console log line is still there');
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
});
