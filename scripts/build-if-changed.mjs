// `npm start` runs this before the server: the build — the TypeScript build (`tsc -p .`, several seconds), then the
// console's type check (`tsc -p src/console/app`) and bundle (dist/src/console/build.js: esbuild into dist/console)
// — only when a source changed since the last build, so a restart costs the server's start alone. "Changed": a
// file under src/, workers/ or bench/ (.ts and .cts, and the console's .tsx and .css), tsconfig.json, package.json or
// package-lock.json is newer than the last build's stamp, or a source was added or removed (the list of sources is
// part of the stamp). A fresh clone has no stamp: it builds. `--force` always builds (`npm run build`, which
// `npm test` and the benchmarks run) and writes the stamp too.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(root, 'dist', '.build-stamp.json');
const SOURCE_DIRS = ['src', 'workers', 'bench'];
const FILES = ['tsconfig.json', 'package.json', 'package-lock.json', 'scripts/bundle-entries.mjs'];

function sources(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, out);
    else if (/\.(c?ts|tsx|css)$/.test(entry.name)) out.push(path);
  }
  return out;
}

const inputs = [...SOURCE_DIRS.flatMap((d) => (existsSync(join(root, d)) ? sources(join(root, d), []) : [])), ...FILES.map((f) => join(root, f))].filter((f) => existsSync(f));
const list = inputs.map((f) => relative(root, f)).sort();
const newest = Math.max(...inputs.map((f) => statSync(f).mtimeMs));

let stamp = null;
try {
  stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
} catch {
  /* never built here */
}
// The console (src/console/app) is built beside the server when its sources are there.
const consoleApp = join(root, 'src', 'console', 'app');
const hasConsole = existsSync(join(consoleApp, 'tsconfig.json'));
const built = ['dist/src/main.js', ...(hasConsole ? ['dist/console/index.html'] : [])].every((f) => existsSync(join(root, f)));
const upToDate = stamp !== null && stamp.builtFrom >= newest && JSON.stringify(stamp.sources) === JSON.stringify(list) && built;
const force = process.argv.includes('--force');
if (upToDate && !force) process.exit(0);

// The stamp records when the build started: a source saved during the build is newer, so the next start rebuilds.
const started = Date.now();
// stderr: `npm run quill` prints a key on stdout.
if (!force) console.error(stamp === null ? 'build: no previous build, compiling' : 'build: sources changed since the last build, compiling');
const tscPath = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const steps = [[tscPath, '-p', root], [join(root, 'scripts', 'bundle-entries.mjs')], ...(hasConsole ? [[tscPath, '-p', consoleApp], [join(root, 'dist', 'src', 'console', 'build.js')]] : [])];
for (const args of steps) {
  const step = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (step.status !== 0) process.exit(step.status ?? 1);
}
writeFileSync(STAMP, JSON.stringify({ builtFrom: started, sources: list }));
