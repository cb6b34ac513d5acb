/** Where a bench's JSON document goes: stdout, and bench/results/<file> (or QUILL_BENCH_OUT). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR } from './paths.js';

export function publishResult(doc: unknown, file: string, log: (msg: string) => void): void {
  const json = JSON.stringify(doc, null, 2);
  process.stdout.write(json + '\n');
  const outFile = process.env.QUILL_BENCH_OUT ?? join(RESULTS_DIR, file);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(outFile, json + '\n');
  log(`written to ${outFile}`);
}
