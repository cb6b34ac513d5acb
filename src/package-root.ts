// Where Quill's package lives (the directory of its package.json), for the files it reads beside its code:
// config/default.json, dist/workers, dist/console, package.json's version. Found by walking up from this module,
// because the same code runs from src/ (tests, through a TypeScript loader), from dist/src/ (tsc's output) and
// inlined into the bundled entry points (dist/src/main.js, dist/workers/shard-worker.js, dist/src/cli/quill.js),
// each at a different depth.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && isQuillManifest(manifest)) return (cached = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error(`Quill's package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

function isQuillManifest(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown }).name === 'quill';
  } catch {
    return false;
  }
}
