/**
 * `npm start`: load the configuration, start Quill, announce it, and drain cleanly on SIGTERM/SIGINT.
 *
 * Every announcement is a JSON log line (src/observability/logger.ts). On a terminal the human banner is printed
 * as well, with the first start's keys; elsewhere (a container, a service manager) those keys travel in the
 * first-start log line, the only place they ever appear.
 *
 * How the process ends (config/README.md, "Health, statistics and stopping"): 0 after a SIGTERM/SIGINT drain; 1
 * after a `start_failed` line when the start is refused or fails (invalid configuration, a data directory of a
 * newer format or held by another Quill, a port taken, ...), or after `stop_failed`. Never of a signal of its own:
 * process.exit runs only once no worker thread is at work (they are closed first: src/front/front.ts), since a
 * thread cut short while it loads or opens its stores aborts the whole process.
 */
import { loadConfig } from './config/load-config.js';
import type { Config } from './config/schema.js';
import { startQuill } from './front/front.js';
import { createLogger, flushLogs, lifecycle, type Logger } from './observability/logger.js';

/** The first user's password is printed once, when generated; one taken from the environment is not echoed. */
function consoleLine(base: string, email: string, password: string | null, fromEnv: boolean): string {
  const with_ = !password ? '' : fromEnv ? ' with QUILL_ADMIN_PASSWORD' : ` with password ${password}`;
  return `Console: ${base}/console/  (sign in as ${email}${with_})`;
}

/** A refused or failed start: one `start_failed` line, then exit 1 (no worker thread runs by then). */
function refuse(log: Logger, error: unknown): never {
  lifecycle(log).fatal({ event: 'start_failed', err: error }, `Quill did not start: ${(error as Error)?.message ?? error}`);
  flushLogs();
  process.exit(1);
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    refuse(createLogger({ logLevel: 'info' }, 'front'), error);
  }
  const log = createLogger(config, 'front', { async: true });
  const life = lifecycle(log);
  let quill;
  try {
    quill = await startQuill(config, log);
  } catch (error) {
    refuse(log, error);
  }
  const base = `http://${config.host}:${quill.port}`;
  const { boot } = quill;
  // The keys line comes before the start line: whoever waits for "listening" has both.
  if (boot.created && !process.stdout.isTTY) {
    life.info(
      { event: 'first_start', project_id: boot.projectId, email: boot.email, project_api_key: boot.projectApiKey, personal_api_key: boot.personalApiKey },
      'First start: created an organization, a user, a project and their keys.',
    );
  }
  life.info(
    { event: 'start', url: base, port: quill.port, workers: config.workers, data_dir: config.dataDir, created: boot.created, metrics_port: quill.metricsPort },
    `Quill listening on ${base} (${config.workers} shard workers, data in ${config.dataDir}). ${boot.created ? 'First start.' : 'Using the existing data directory.'}`,
  );
  // The console line says where to sign in, and the first user's password when it was just generated: once. In a
  // terminal the banner below shows it, so the log line there leaves it out.
  const signIn = consoleLine(base, boot.email, boot.adminPassword, config.adminPassword !== null);
  const logged = process.stdout.isTTY ? consoleLine(base, boot.email, null, false) : signIn;
  life.info({ event: 'console', url: `${base}/console/`, email: boot.email }, logged);
  if (process.stdout.isTTY) {
    flushLogs();
    process.stdout.write(banner(base, boot, signIn) + '\n');
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    life.info({ event: 'stopping', signal }, `${signal}: draining`);
    quill.close().then(
      () => {
        life.info({ event: 'stop' }, 'Quill stopped cleanly');
        flushLogs();
        process.exit(0);
      },
      (error: unknown) => {
        life.error({ event: 'stop_failed', err: error }, 'shutdown failed');
        flushLogs();
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function banner(base: string, boot: { created: boolean; projectApiKey: string; personalApiKey: string | null; projectId: number; email: string }, signIn: string): string {
  return [
    boot.created ? 'First start: created an organization, a user, a project and their keys.' : 'Using the existing data directory.',
    `  Project API key (SDKs, /capture/, /flags/):  ${boot.projectApiKey}`,
    boot.personalApiKey
      ? `  Personal API key (private API, Bearer):       ${boot.personalApiKey}`
      : '  Personal API key: shown only at first start (lost it? npm run quill -- create-key --email <user e-mail>).',
    `  Project id: ${boot.projectId}    user: ${boot.email}`,
    `  ${signIn}`,
    `  Try: curl ${base}/_health`,
    `       curl -H "Authorization: Bearer <personal key>" ${base}/api/projects/@current/feature_flags/`,
  ].join('\n');
}

/**
 * Last resort, once Quill serves: an exception nothing caught is logged and the process keeps serving every other
 * organization. The causes are fixed where they arise (bounded JSON depth, per-request packing in the worker pool,
 * try/catch around every request); this only keeps a missed one from being a denial of service. It is safe here
 * because the front holds no state a half-run callback could corrupt beyond the request it served: the worker
 * threads own the data, and a worker thread that throws is not caught by this handler — it dies and Piscina
 * replaces it, which reopens its shards from disk (src/worker/entry.ts), a cleaner recovery than running on.
 */
function keepServingOnUncaught(): void {
  process.on('uncaughtException', (error) => console.error(`uncaught exception (Quill keeps serving): ${error?.stack ?? error}`));
  process.on('unhandledRejection', (reason) => console.error(`unhandled rejection (Quill keeps serving): ${(reason as Error)?.stack ?? reason}`));
}

main().then(keepServingOnUncaught, (error: unknown) => {
  console.error((error as Error)?.stack ?? String(error));
  process.exit(1);
});
