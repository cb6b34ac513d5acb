// Online backup (npm run backup, POST /_backup) under /batch/ load, then restore: a server started on the copy has
// every event acknowledged before the backup began, each once.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { Client, removeDir, startQuill } from '../helpers/quill.js';
import { runBackupCli, storedUuids } from '../helpers/backup.js';

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
  // Acknowledged before the command was even started: all owed (see runBackupCli on why not its own "started").
  const beforeCli = load.ackedBefore(cli.askedAt);

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
