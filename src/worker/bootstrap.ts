/**
 * First start on an empty data directory: fix the shard layout, record the format version and create an
 * organization, a user, a project and their keys (the ones from QUILL_PROJECT_API_KEY / QUILL_PERSONAL_API_KEY when
 * given), and the first user's console password (QUILL_ADMIN_PASSWORD, or generated). Later starts find the layout
 * and only report the first project's key — and give the first user a password if it has none (a data directory
 * from before the console). A directory of an older format is upgraded first (src/worker/upgrade.ts), one of a
 * newer format is refused before anything is written.
 */
import type { BootstrapResult } from '../protocol/worker-messages.js';
import { LOCK_WAIT_MS, lockDataDir } from './data-dir-lock.js';
import { all } from '../stores/lmdb-env.js';
import { createOrganization, createPersonalKey, createProject, createUser, LEVEL_OWNER } from './ops/accounts.js';
import { nowIso } from './ops/types.js';
import { hashPasswordSync } from '../domain/passwords.js';
import { randomAlnum } from '../domain/secrets.js';
import type { WorkerRuntime } from './runtime.js';
import { checkFormat, DATA_FORMAT_VERSION, newerFormatMessage } from '../stores/data-dir/format.js';
import { upgradeDataDir } from './upgrade.js';

export const FIRST_USER_EMAIL = 'admin@quill.local';

export async function bootstrap(rt: WorkerRuntime): Promise<BootstrapResult> {
  const { meta, config } = rt;
  const unlock = await lockDataDir(config.dataDir, {
    onWait: (holder) => rt.log.warn({ event: 'data_dir_lock_wait', holder_pid: holder.pid }, `data directory ${config.dataDir} is locked by a running Quill (pid ${holder.pid}): waiting up to ${LOCK_WAIT_MS / 1000} s for it to exit`),
    onTakeover: (stale) => rt.log.info({ event: 'data_dir_lock_takeover', stale_pid: stale?.pid ?? null }, stale
      ? `data directory lock: pid ${stale.pid} no longer runs (or is another process now), taking the lock over`
      : 'data directory lock: the lock file names no process, taking it over'),
  });
  rt.onClose(unlock);
  const format = checkFormat(meta.formatVersion(), meta.layout() !== undefined);
  if (format.kind === 'newer') {
    unlock();
    throw new Error(newerFormatMessage(config.dataDir, format.found));
  }
  if (format.kind === 'upgrade') await upgradeDataDir(rt, format.from);
  const adminPassword = config.adminPassword ?? randomAlnum(20);
  // Derived inside the write (tens of milliseconds, once per data directory): nothing else is running yet.
  const adminHash = () => hashPasswordSync(adminPassword);
  const result = await meta.write((): BootstrapResult => {
    const layout = meta.layout();
    if (layout) {
      const first = all(meta.projects.getRange({ limit: 1 }))[0]?.value;
      const user = all(meta.users.getRange({ limit: 1 }))[0]?.value;
      const passwordDue = user !== undefined && !user.password_hash;
      if (passwordDue) meta.users.put(user.id, { ...user, password_hash: adminHash() });
      return {
        shardCount: layout.shardCount, created: false, projectId: first?.id ?? 0, projectApiKey: first?.api_token ?? '',
        personalApiKey: config.personalApiKey, email: user?.email ?? '', adminPassword: passwordDue ? adminPassword : null,
      };
    }
    meta.setLayout({ shardCount: config.workers, createdAt: nowIso() });
    meta.setFormatVersion(DATA_FORMAT_VERSION);
    const org = createOrganization(meta, 'Default organization');
    const project = createProject(meta, org.id, 'Default project', config.projectApiKey ?? undefined);
    const user = createUser(meta, org, { email: FIRST_USER_EMAIL, first_name: 'Admin', level: LEVEL_OWNER, currentProjectId: project.id });
    meta.users.put(user.id, { ...user, password_hash: adminHash() });
    const key = createPersonalKey(meta, user.id, 'Created at first start', config.personalApiKey ?? undefined);
    return { shardCount: config.workers, created: true, projectId: project.id, projectApiKey: project.api_token, personalApiKey: key.key, email: user.email, adminPassword };
  });
  rt.cache.invalidate({ projects: true });
  return result;
}
