// Data-directory format versions (src/stores/data-dir/format.ts): a directory of format 1 — written before the
// version was recorded: no `format` entry in the metadata env, projects without `event_retention_days` — is copied
// and then upgraded at start; a directory of a newer format is refused with a clear message and left as it was.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { Client, logLines, removeDir, startQuill } from '../helpers/quill.js';
import { openEnv, openTable } from '../../src/stores/lmdb-env.js';

/** Reads and rewrites a stopped server's metadata env, as the test's fixture writer. */
async function withMeta<T>(dataDir: string, fn: (settings: ReturnType<typeof openTable<any, string>>, projects: ReturnType<typeof openTable<any, number>>) => T): Promise<T> {
  const env = openEnv(join(dataDir, 'meta.mdb'));
  try {
    const result = await env.transaction(() => fn(openTable<any, string>(env, 'settings'), openTable<any, number>(env, 'projects')));
    await env.flushed;
    return result;
  } finally {
    await env.close();
  }
}

t.test('a format-1 directory is backed up, then upgraded; a newer one is refused', async (t) => {
  const q = await startQuill();
  t.teardown(() => removeDir(q.dataDir));
  const api = new Client(q.base);
  t.equal((await api.get('/_stats')).body.data_format_version, 2, 'a new directory records the current format');
  t.equal((await api.post('/api/projects/@current/feature_flags/', { key: 'from-format-1' })).status, 201);
  const events = Array.from({ length: 30 }, (_, i) => event(`old-${i % 3}`, 'old event'));
  t.equal((await sendBatch(q.base, events)).status, 200);
  t.equal((await storedEvents(api, 'old-0')).length, 10);
  t.equal(await q.stop(), 0);

  // The fixture: what the previous format looked like.
  await withMeta(q.dataDir, (settings, projects) => {
    settings.remove('format');
    for (const { key, value } of projects.getRange()) {
      const { event_retention_days: _dropped, ...old } = value;
      projects.put(key, old);
    }
  });
  t.equal(await withMeta(q.dataDir, (settings) => settings.get('format')), undefined);

  const upgraded = await startQuill({ dataDir: q.dataDir });
  const lines = logLines(upgraded.output());
  const backupLine = lines.find((l) => l.event === 'upgrade_backup');
  const upgradeLine = lines.find((l) => l.event === 'upgrade');
  t.match(backupLine, { from: 1, to: 2, target: new RegExp(`^${q.dataDir}/upgrade-backups/format-1-`) });
  t.match(upgradeLine, { from: 1, to: 2, steps: ['projects get event_retention_days (null: events are kept)'] });
  t.ok(lines.indexOf(backupLine!) < lines.indexOf(upgradeLine!), 'the copy is made before anything is migrated');
  const uapi = new Client(upgraded.base);
  t.equal((await uapi.get('/_stats')).body.data_format_version, 2);
  t.equal((await uapi.get('/api/projects/@current/')).body.event_retention_days, null);
  t.same((await uapi.get('/api/projects/@current/feature_flags/')).body.results.map((f: { key: string }) => f.key), ['from-format-1']);
  t.equal((await storedEvents(uapi, 'old-1')).length, 10, 'the events are all there');
  t.equal(await upgraded.stop(), 0);

  const copies = readdirSync(join(q.dataDir, 'upgrade-backups'));
  t.equal(copies.length, 1);
  const copy = join(q.dataDir, 'upgrade-backups', copies[0]!);
  t.match(JSON.parse(readFileSync(join(copy, 'backup.json'), 'utf8')), { formatVersion: 1, shards: 2 });
  t.equal(await withMeta(copy, (settings) => settings.get('format')), undefined, 'the copy is the format-1 directory');
  t.equal((await withMeta(q.dataDir, (settings) => settings.get('format'))).version, 2);

  // Written by a newer Quill.
  await withMeta(q.dataDir, (settings) => settings.put('format', { version: 3 }));
  await t.rejects(startQuill({ dataDir: q.dataDir }), /exited with 1 before listening[\s\S]*format version 3, written by a newer Quill; this Quill reads format version 2 at most and has not changed it/);
  t.equal((await withMeta(q.dataDir, (settings) => settings.get('format'))).version, 3, 'left as it was');
  t.equal(readdirSync(join(q.dataDir, 'upgrade-backups')).length, 1, 'no copy made');
});
