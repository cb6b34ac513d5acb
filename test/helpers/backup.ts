/** Running `quill backup` and reading back what a restored server stores (test/e2e/backup-*.test.ts). */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client, ROOT, type QuillProcess } from './quill.js';
import { allEvents } from './ingest.js';

const CLI = join(ROOT, 'dist/src/cli/quill.js');

/**
 * Runs `quill backup`. `askedAt` (performance.now() here): just before the command was started. Whatever this
 * process saw acknowledged before then was acknowledged before the copy began, whatever the load. The moment the
 * command says it began copying cannot serve: its line and an acknowledgement travel by different pipes, and under
 * load an acknowledgement given after the copy began arrived here before that line (a CI run missed 12 such events
 * that were never owed).
 */
export function runBackupCli(dataDir: string, target: string): Promise<{ code: number | null; out: string; askedAt: number }> {
  return new Promise((resolve) => {
    const askedAt = performance.now();
    const proc = spawn(process.execPath, [CLI, 'backup', target], { cwd: ROOT, env: { ...process.env, QUILL_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    proc.once('exit', (code) => resolve({ code, out, askedAt }));
  });
}

/** Every stored event's uuid, through the events API (following its pages). */
export async function storedUuids(q: QuillProcess): Promise<string[]> {
  return (await allEvents(new Client(q.base), '')).map((e: { id: string }) => e.id);
}
