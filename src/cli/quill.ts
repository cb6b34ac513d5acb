/**
 * `npm run quill -- <command>`: operator commands that work on a data directory, whether the server runs or not.
 *
 *   create-key --email <user e-mail> [--label <text>] [--scopes <scope,scope>] [--data-dir <dir>]
 *     Mints a personal API key for an existing user and prints it (once). The data directory is QUILL_DATA_DIR
 *     (or config/default.json's) unless --data-dir is given; scopes default to `*` (full access).
 *
 *   backup <target dir> [--data-dir <dir>]
 *     Copies the data directory, online, into <target dir> (new or empty). `QUILL_DATA_DIR=<target dir> npm start`
 *     then starts with every event acknowledged before the backup began. A relative target is taken from the
 *     directory npm was run in.
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { loadConfig } from '../config/load-config.js';
import { CommandError, createKey } from './create-key.js';
import { backupCommand } from './backup.js';

const USAGE = [
  'usage: npm run quill -- create-key --email <user e-mail> [--label <text>] [--scopes <scope,scope>] [--data-dir <dir>]',
  '       npm run backup -- <target dir> [--data-dir <dir>]',
].join('\n');

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'backup') return backup(rest);
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
  const email = values.email;
  return reportingRefusals(async () => {
    const created = await createKey({
      dataDir,
      email,
      label: values.label ?? 'Created with quill create-key',
      scopes: (values.scopes ?? '*').split(',').map((s) => s.trim()).filter(Boolean),
    });
    console.log(`Personal API key for ${created.email} (scopes ${created.scopes.join(',')}), shown once:`);
    console.log(created.key);
  });
}

/** Runs a command: 0 when it succeeds, 1 with its message when it refuses (the operator's input); else throws. */
async function reportingRefusals(run: () => Promise<void>): Promise<number> {
  try {
    await run();
    return 0;
  } catch (error) {
    if (error instanceof CommandError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

async function backup(args: string[]): Promise<number> {
  let parsed: { values: { 'data-dir'?: string }; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { 'data-dir': { type: 'string' } }, allowPositionals: true, strict: true });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed.positionals.length !== 1) {
    console.error(`backup takes one target directory\n${USAGE}`);
    return 2;
  }
  // npm runs scripts from the package root; the operator's relative paths mean the directory they typed in.
  const base = process.env.INIT_CWD ?? process.cwd();
  const target = resolve(base, parsed.positionals[0]!);
  const dataDir = parsed.values['data-dir'] ? resolve(base, parsed.values['data-dir']) : loadConfig().dataDir;
  return reportingRefusals(async () => {
    const report = await backupCommand(dataDir, target, () => console.error(`backup of ${dataDir} into ${target} started`));
    console.log(JSON.stringify({ event: 'backup', source: dataDir, ...report }));
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error((error as Error)?.stack ?? String(error));
    process.exit(1);
  },
);
