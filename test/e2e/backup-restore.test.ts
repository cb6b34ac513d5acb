// Online backup (npm run backup, POST /_backup) under /batch/ load, then restore: a server started on the copy has
// every event acknowledged before the backup began, each once.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { Client, ROOT, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';
import { backupDataDir, envPath, type EnvCopier } from '../../src/stores/data-dir/backup.js';
import { copyClosedEnv } from '../../src/worker/backup.js';

const CLI = join(ROOT, 'dist/src/cli/quill.js');

/** Sends batches of fresh events from `senders` loops until stopped; remembers when each batch was acknowledged. */
function loadGenerator(base: string, senders = 2, perBatch = 25) {
  const acked: { at: number; uuids: string[] }[] = [];
  let failed = 0;
  let stopped = false;
  let n = 0;
  const loops = Array.from({ length: senders }, async (_, s) => {
    while (!stopped) {
      const batch = Array.from({ length: perBatch }, () => event(`load-${s}-${n++ % 40}`, `load ${n % 3}`));
      const res = await sendBatch(base, batch).catch(() => null);
      if (res?.status === 200) acked.push({ at: performance.now(), uuids: batch.map((e) => e.uuid) });
      else failed++;
    }
  });
  return {
    ackedBefore: (at: number) => acked.filter((a) => a.at < at).flatMap((a) => a.uuids),
    count: () => acked.length * perBatch,
    failed: () => failed,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Runs `quill backup`; `startedAt`: when it said it began copying (performance.now() here). */
function runBackupCli(dataDir: string, target: string): Promise<{ code: number | null; out: string; startedAt: number }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [CLI, 'backup', target], { cwd: ROOT, env: { ...process.env, QUILL_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let startedAt = Infinity;
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => {
      out += d;
      if (startedAt === Infinity && out.includes(' started')) startedAt = performance.now();
    });
    proc.once('exit', (code) => resolve({ code, out, startedAt }));
  });
}

/** Every stored event's uuid, through the events API. */
async function storedUuids(q: QuillProcess): Promise<string[]> {
  const res = await new Client(q.base).get('/api/projects/@current/events/?limit=100000');
  if (res.status !== 200) throw new Error(`events list: ${res.status} ${res.text}`);
  return res.body.results.map((e: { id: string }) => e.id);
}

async function checkRestore(t: Tap.Test, copy: string, mustHave: string[]): Promise<void> {
  t.ok(existsSync(join(copy, 'backup.json')), 'the copy is complete (manifest written last)');
  const restored = await startQuill({ dataDir: copy });
  t.teardown(async () => {
    await restored.stop();
  });
  const uuids = await storedUuids(restored);
  const stored = new Set(uuids);
  t.equal(uuids.length, stored.size, 'no event is stored twice');
  const missing = mustHave.filter((u) => !stored.has(u));
  t.same(missing, [], `all ${mustHave.length} events acknowledged before the backup began are in the copy`);
  // The restored node ingests as usual: its logs go on from the copy's end, and no shard takes the new records
  // for ones it had applied before (the copy's applied positions are capped at the copied logs' ends).
  const fresh = Array.from({ length: 200 }, (_, i) => event(`after-restore-${i % 50}`, 'after restore'));
  for (let i = 0; i < fresh.length; i += 20) t.equal((await sendBatch(restored.base, fresh.slice(i, i + 20))).status, 200);
  const now = new Set(await storedUuids(restored));
  t.same(fresh.filter((e) => !now.has(e.uuid)).map((e) => e.uuid), [], 'events sent to the restored node are stored');
}

t.test('backup under load, then restore', async (t) => {
  const backupDir = mkdtempSync(join(tmpdir(), 'quill-backups-'));
  const q = await startQuill({ env: { QUILL_BACKUP_DIR: backupDir } });
  const cliCopy = mkdtempSync(join(tmpdir(), 'quill-backup-cli-'));
  t.teardown(async () => {
    await q.stop();
    for (const dir of [q.dataDir, backupDir, cliCopy]) removeDir(dir);
  });
  const api = new Client(q.base);
  t.equal((await api.post('/api/projects/@current/feature_flags/', { key: 'kept-by-backup' })).status, 201);

  const load = loadGenerator(q.base);
  while (load.count() < 1000) await new Promise((r) => setTimeout(r, 50));

  // npm run backup (the CLI), while the load goes on.
  const cli = await runBackupCli(q.dataDir, cliCopy);
  t.equal(cli.code, 0, `the backup command succeeds: ${cli.out}`);
  t.match(JSON.parse(cli.out.trim().split('\n').pop()!), { event: 'backup', target: cliCopy, shards: 2, formatVersion: 2 });
  // Said just before it copied anything; the acknowledgements that arrived before are all owed.
  const beforeCli = load.ackedBefore(cli.startedAt);

  // POST /_backup, still under load.
  const httpStarted = performance.now();
  const http = await api.post('/_backup');
  t.equal(http.status, 201, http.text);
  t.match(http.body, { path: new RegExp(`^${backupDir}/quill-`), shards: 2, format_version: 2 });
  const beforeHttp = load.ackedBefore(httpStarted);

  await load.stop();
  t.equal(load.failed(), 0, 'no request failed while backups ran');
  t.ok(beforeCli.length >= 1000 && beforeHttp.length > beforeCli.length, `${beforeCli.length} and ${beforeHttp.length} events acknowledged before each backup`);
  await q.stop();

  await checkRestore(t, cliCopy, beforeCli);
  await checkRestore(t, http.body.path, beforeHttp);
  const manifest = JSON.parse(readFileSync(join(http.body.path, 'backup.json'), 'utf8'));
  t.match(manifest, { source: q.dataDir, shards: 2, formatVersion: 2 });
});

t.test('a shard copied after the logs may have applied records past their end: the copy still ingests', async (t) => {
  const q = await startQuill();
  const copy = mkdtempSync(join(tmpdir(), 'quill-backup-late-'));
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
    removeDir(copy);
  });
  const api = new Client(q.base);

  // Who may start a backup over HTTP (this server has no QUILL_BACKUP_DIR), and what the command refuses.
  const off = await api.post('/_backup');
  t.equal(off.status, 404);
  t.same(off.body, { type: 'invalid_request', code: 'not_found', detail: 'Backups over HTTP are off: set QUILL_BACKUP_DIR.', attr: null });
  const member = await api.post('/api/organizations/@current/members/', { email: 'member@example.com', level: 1 });
  const denied = await api.withKey(member.body.personal_api_key).post('/_backup');
  t.equal(denied.status, 403);
  t.equal(denied.body.detail, 'Only organization owners (or the operator key) can start a backup.');
  t.equal((await api.withKey(null).post('/_backup')).status, 401);
  t.equal((await api.get('/_backup')).status, 405);
  const refused = await runBackupCli(q.dataDir, q.dataDir);
  t.equal(refused.code, 1, 'the command refuses a target that is not empty');
  t.match(refused.out, /is not empty: a backup goes into a new or empty directory/);

  const early = Array.from({ length: 40 }, (_, i) => event(`late-${i}`, 'early'));
  t.equal((await sendBatch(q.base, early)).status, 200);
  // The logs are copied first; then, before the first events environment is copied, more events are logged and
  // applied (the events API waits until they are), so that shard's copy has applied records the copied logs lack.
  let late: ReturnType<typeof event>[] = [];
  const copier: EnvCopier = async (env, target) => {
    if (late.length === 0) {
      late = Array.from({ length: 40 }, (_, i) => event(`late-${i}`, 'late'));
      for (let i = 0; i < late.length; i += 10) t.equal((await sendBatch(q.base, late.slice(i, i + 10))).status, 200);
      t.equal((await api.get('/api/projects/@current/events/?limit=1')).status, 200);
    }
    await copyClosedEnv(envPath(q.dataDir, env), target);
  };
  await backupDataDir(q.dataDir, copy, copier, 2);
  await q.stop();
  const restored = await startQuill({ dataDir: copy });
  t.teardown(() => restored.stop());
  const fresh = Array.from({ length: 200 }, (_, i) => event(`late-${i % 40}`, 'after restore'));
  for (let i = 0; i < fresh.length; i += 10) t.equal((await sendBatch(restored.base, fresh.slice(i, i + 10))).status, 200);
  const stored = new Set(await storedUuids(restored));
  t.same(early.filter((e) => !stored.has(e.uuid)).length, 0, 'what was acknowledged before the backup is there');
  t.same(fresh.filter((e) => !stored.has(e.uuid)).length, 0, 'every event sent to the restored node is stored');
});
