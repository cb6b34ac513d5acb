/**
 * `npm start`: load the configuration, start Quill, print how to use it, and drain cleanly on SIGTERM/SIGINT.
 */
import { loadConfig } from './config/load-config.js';
import { startQuill } from './front/front.js';

/** The first user's password is printed once, when generated; one taken from the environment is not echoed. */
function consolePassword(password: string | null, fromEnv: boolean): string {
  if (!password) return '';
  return fromEnv ? ' with QUILL_ADMIN_PASSWORD' : ` with password ${password}`;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const quill = await startQuill(config);
  const base = `http://${config.host}:${quill.port}`;
  const { boot } = quill;
  const lines = [
    `Quill listening on ${base} (${config.workers} shard workers, data in ${config.dataDir})`,
    boot.created ? 'First start: created an organization, a user, a project and their keys.' : 'Using the existing data directory.',
    `  Project API key (SDKs, /capture/, /flags/):  ${boot.projectApiKey}`,
    boot.personalApiKey
      ? `  Personal API key (private API, Bearer):       ${boot.personalApiKey}`
      : '  Personal API key: shown only at first start (lost it? npm run quill -- create-key --email <user e-mail>).',
    `  Project id: ${boot.projectId}    user: ${boot.email}`,
    `  Console: ${base}/console/  (sign in as ${boot.email}${consolePassword(boot.adminPassword, config.adminPassword !== null)})`,
    `  Try: curl ${base}/_health`,
    `       curl -H "Authorization: Bearer <personal key>" ${base}/api/projects/@current/feature_flags/`,
  ];
  console.log(lines.join('\n'));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: draining`);
    quill.close().then(
      () => {
        console.log('Quill stopped cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        console.error('shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error((error as Error)?.stack ?? String(error));
  process.exit(1);
});
