// Lost first key: `npm run quill -- create-key` mints a key for an existing user of an
// existing data directory, with the server stopped or running (a running server learns it on first use).
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, ROOT, removeDir, startQuill } from '../helpers/quill.js';

const CLI = join(ROOT, 'dist/src/cli/quill.js');

function quillCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const keyIn = (stdout: string): string => /^(phx_[A-Za-z0-9]{43})$/m.exec(stdout)?.[1] ?? '';

/** The data directory both cases use: first with the server running, then stopped (one server start fewer). */
let dataDir = '';
t.teardown(() => dataDir && removeDir(dataDir));

t.test('server running: the key works on its first request, scopes as asked', async (t) => {
  const q = await startQuill();
  dataDir = q.dataDir;
  t.teardown(() => q.stop());
  const api = new Client(q.base);
  t.equal((await api.get('/api/users/@me/')).status, 200, 'warm the front\'s key cache first');

  const full = await quillCli(['create-key', '--email', 'admin@quill.local', '--data-dir', q.dataDir]);
  t.equal(full.code, 0, full.stderr);
  const fullKey = keyIn(full.stdout);
  t.equal((await api.withKey(fullKey).get('/api/projects/@current/feature_flags/')).status, 200, 'no restart, no refresh call');
  t.equal((await api.withKey(fullKey).post('/api/projects/@current/feature_flags/', { key: 'cli-key-flag' })).status, 201);

  const scoped = await quillCli(['create-key', '--email', 'admin@quill.local', '--scopes', 'feature_flag:read', '--label', 'ci reader'], { QUILL_DATA_DIR: q.dataDir });
  t.equal(scoped.code, 0, scoped.stderr);
  const reader = api.withKey(keyIn(scoped.stdout));
  t.equal((await reader.get('/api/projects/@current/feature_flags/')).status, 200);
  t.equal((await reader.post('/api/projects/@current/feature_flags/', { key: 'nope' })).status, 403);

  // A key deleted through the API stays deleted, though a lookup could have cached it.
  const listed = await api.get('/api/personal_api_keys/');
  const readerId = listed.body.find((k: { label: string }) => k.label === 'ci reader').id;
  t.equal((await api.delete(`/api/personal_api_keys/${readerId}/`)).status, 204);
  t.equal((await reader.get('/api/projects/@current/feature_flags/')).status, 401);
  t.equal((await api.withKey('phx_' + 'x'.repeat(43)).get('/api/users/@me/')).status, 401, 'unknown keys stay unknown');
});

t.test('server stopped: refusals, then the minted key works after the restart', async (t) => {
  const first = { dataDir };
  t.ok(dataDir, 'the directory of the previous case, its server stopped');

  // Refusals first, on the same directory: the operator's mistakes are reported, nothing is written.
  const unknown = await quillCli(['create-key', '--email', 'nobody@example.com', '--data-dir', first.dataDir]);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /no user with e-mail nobody@example\.com; users: admin@quill\.local/);
  const badScope = await quillCli(['create-key', '--email', 'admin@quill.local', '--data-dir', first.dataDir, '--scopes', 'everything']);
  t.equal(badScope.code, 1);
  t.match(badScope.stderr, /invalid scope "everything"/);
  const longLabel = await quillCli(['create-key', '--email', 'admin@quill.local', '--data-dir', first.dataDir, '--label', 'l'.repeat(41)]);
  t.equal(longLabel.code, 1);
  t.match(longLabel.stderr, /--label: Ensure this field has no more than 40 characters\./);
  t.equal((await quillCli(['create-key', '--data-dir', first.dataDir])).code, 2, '--email is required');
  t.equal((await quillCli(['make-coffee'])).code, 2, 'unknown command');
  const empty = mkdtempSync(join(tmpdir(), 'quill-cli-empty-'));
  t.teardown(() => removeDir(empty));
  const missing = await quillCli(['create-key', '--email', 'admin@quill.local', '--data-dir', empty]);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /no Quill data directory/);

  const res = await quillCli(['create-key', '--email', 'ADMIN@quill.local', '--label', 'recovered'], { QUILL_DATA_DIR: first.dataDir });
  t.equal(res.code, 0, res.stderr);
  const key = keyIn(res.stdout);
  t.ok(key, 'the key is printed');
  t.match(res.stdout, /admin@quill\.local/);

  const again = await startQuill({ dataDir: first.dataDir, env: { QUILL_PERSONAL_API_KEY: '' } });
  t.teardown(() => again.stop());
  const api = new Client(again.base, key);
  const me = await api.get('/api/users/@me/');
  t.equal(me.status, 200);
  t.equal(me.body.email, 'admin@quill.local');
  const keys = await api.get('/api/personal_api_keys/');
  t.ok(keys.body.some((k: { label: string; scopes: string[] }) => k.label === 'recovered' && k.scopes[0] === '*'));
});
