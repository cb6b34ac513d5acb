/**
 * `npm run quill -- <command>`: operator commands that work on a data directory, whether the server runs or not.
 *
 *   create-key --email <user e-mail> [--label <text>] [--scopes <scope,scope>] [--data-dir <dir>]
 *     Mints a personal API key for an existing user and prints it (once). The data directory is QUILL_DATA_DIR
 *     (or config/default.json's) unless --data-dir is given; scopes default to `*` (full access).
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { loadConfig } from '../config/load-config.js';
import { CommandError, createKey } from './create-key.js';

const USAGE = 'usage: npm run quill -- create-key --email <user e-mail> [--label <text>] [--scopes <scope,scope>] [--data-dir <dir>]';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'create-key') {
    console.error(USAGE);
    return 2;
  }
  let values: { email?: string; label?: string; scopes?: string; 'data-dir'?: string };
  try {
    values = parseArgs({
      args: rest,
      options: { email: { type: 'string' }, label: { type: 'string' }, scopes: { type: 'string' }, 'data-dir': { type: 'string' } },
      strict: true,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.email) {
    console.error(`--email is required\n${USAGE}`);
    return 2;
  }
  const dataDir = values['data-dir'] ? resolve(values['data-dir']) : loadConfig().dataDir;
  try {
    const created = await createKey({
      dataDir,
      email: values.email,
      label: values.label ?? 'Created with quill create-key',
      scopes: (values.scopes ?? '*').split(',').map((s) => s.trim()).filter(Boolean),
    });
    console.log(`Personal API key for ${created.email} (scopes ${created.scopes.join(',')}), shown once:`);
    console.log(created.key);
    return 0;
  } catch (error) {
    if (error instanceof CommandError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error((error as Error)?.stack ?? String(error));
    process.exit(1);
  },
);
