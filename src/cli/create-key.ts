/**
 * `quill create-key`: mints a personal API key for an existing user of an existing data directory, for an
 * operator who lost the key printed at first start (QUILL_PERSONAL_API_KEY only applies to a new directory).
 *
 * It writes through the metadata LMDB environment, which LMDB lets a second process open while the server runs
 * (its write lock serialises the two processes' writers). It does not take the data directory's lock, which
 * guards the ingest logs: this command never touches them. A running server learns the key on its first use: the
 * front looks a key up in LMDB when its cache does not know it (src/front/key-lookup.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { checkText, MAX_LENGTH } from '../domain/account-fields.js';
import { isValidScope } from '../domain/scopes.js';
import { all } from '../stores/lmdb-env.js';
import { MetaStore } from '../stores/meta/meta-store.js';
import { createPersonalKey } from '../worker/ops/accounts.js';

export interface CreateKeyOptions {
  dataDir: string;
  email: string;
  label: string;
  scopes: string[];
}

export interface CreatedKey {
  key: string;
  id: string;
  userId: number;
  email: string;
  scopes: string[];
}

/** A refusal the command reports on stderr with exit code 1 (no stack trace: it is the operator's input). */
export class CommandError extends Error {}

export async function createKey(opts: CreateKeyOptions): Promise<CreatedKey> {
  const label = checkText('label', opts.label, { max: MAX_LENGTH.keyLabel, required: true });
  if ('problem' in label) throw new CommandError(`--label: ${label.problem.detail}`);
  const badScope = opts.scopes.find((s) => !isValidScope(s));
  if (badScope !== undefined || opts.scopes.length === 0) throw new CommandError(`--scopes: invalid scope "${badScope ?? ''}" (use * or <object>:read|write)`);
  // Opening a missing environment would create an empty one: refuse instead, the directory is not Quill's.
  if (!existsSync(join(opts.dataDir, 'meta.mdb'))) throw new CommandError(`no Quill data directory at ${opts.dataDir} (start Quill once, or set QUILL_DATA_DIR / --data-dir)`);
  const meta = new MetaStore(opts.dataDir);
  try {
    if (!meta.layout()) throw new CommandError(`${opts.dataDir} was never initialised by Quill (start it once first)`);
    const wanted = opts.email.trim().toLowerCase();
    const created = await meta.write(() => {
      const users = all(meta.users.getRange().map((e) => e.value));
      const user = users.find((u) => u.email.toLowerCase() === wanted);
      if (!user) throw new CommandError(`no user with e-mail ${opts.email}; users: ${users.map((u) => u.email).join(', ') || 'none'}`);
      const { record, key } = createPersonalKey(meta, user.id, label.value!, undefined, { scopes: opts.scopes, scopedTeams: null, scopedOrganizations: null });
      return { key, id: record.id, userId: user.id, email: user.email, scopes: record.scopes };
    });
    return created;
  } finally {
    await meta.close();
  }
}
