/** Running `quill backup` and reading back what a restored server stores (test/e2e/backup-*.test.ts). */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client, ROOT, type QuillProcess } from './quill.js';
import { allEvents } from './ingest.js';

const CLI = join(ROOT, 'dist/src/cli/quill.js');

/** Runs `quill backup`; `startedAt`: when it said it began copying (performance.now() here). */
export function runBackupCli(dataDir: string, target: string): Promise<{ code: number | null; out: string; startedAt: number }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [CLI, 'backup', target], { cwd: ROOT, env: { ...process.env, QUILL_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let startedAt = Infinity;
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => {
      out += d;
      if (startedAt === Infinity && out.includes(' started')) startedAt = performance.now();
    });
    proc.once('exit', (code) => resolve({ code, out, startedAt }));
  });
}

/** Every stored event's uuid, through the events API (following its pages). */
export async function storedUuids(q: QuillProcess): Promise<string[]> {
  return (await allEvents(new Client(q.base), '')).map((e: { id: string }) => e.id);
}
