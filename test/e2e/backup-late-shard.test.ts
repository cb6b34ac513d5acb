// Online backup, the adjustment of the copy: a shard whose events environment is copied after the logs may have
// applied records the copied logs do not hold; the restored node must still store every event sent to it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { Client, removeDir, startQuill } from '../helpers/quill.js';
import { runBackupCli, storedUuids } from '../helpers/backup.js';
import { backupDataDir, envPath, type EnvCopier } from '../../src/stores/data-dir/backup.js';
import { copyClosedEnv } from '../../src/worker/backup.js';

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
