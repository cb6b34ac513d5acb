// `npm start` compiles only when a source changed (scripts/build-if-changed.mjs). Run here on a scratch project
// whose `tsc` is a stand-in that records each call, so the test sees exactly when a build happens.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../../helpers/quill.js';

function scratchProject(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'quill-build-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'scripts'));
  copyFileSync(join(ROOT, 'scripts/build-if-changed.mjs'), join(dir, 'scripts/build-if-changed.mjs'));
  // The bundling step after tsc (scripts/bundle-entries.mjs) is a stand-in that does nothing.
  writeFileSync(join(dir, 'scripts/bundle-entries.mjs'), '');
  mkdirSync(join(dir, 'node_modules/typescript/bin'), { recursive: true });
  // The stand-in compiler: counts its calls and produces the entry point `npm start` runs.
  writeFileSync(join(dir, 'node_modules/typescript/bin/tsc'), [
    "const { appendFileSync, mkdirSync, writeFileSync } = require('node:fs');",
    "const root = process.argv[process.argv.indexOf('-p') + 1];",
    "appendFileSync(root + '/tsc-calls', 'x');",
    "mkdirSync(root + '/dist/src', { recursive: true });",
    "writeFileSync(root + '/dist/src/main.js', '');",
  ].join('\n'));
  writeFileSync(join(dir, 'node_modules/typescript/package.json'), '{"type":"commonjs"}');
  mkdirSync(join(dir, 'src/worker'), { recursive: true });
  mkdirSync(join(dir, 'workers'));
  writeFileSync(join(dir, 'src/main.ts'), 'export {};');
  writeFileSync(join(dir, 'src/worker/a.ts'), 'export {};');
  writeFileSync(join(dir, 'workers/w.ts'), 'export {};');
  writeFileSync(join(dir, 'tsconfig.json'), '{}');
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  const calls = () => {
    try {
      return readFileSync(join(dir, 'tsc-calls'), 'utf8').length;
    } catch {
      return 0;
    }
  };
  const start = (...args: string[]) => {
    const before = calls();
    const run = spawnSync(process.execPath, [join(dir, 'scripts/build-if-changed.mjs'), ...args], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`build-if-changed failed: ${run.stderr}`);
    return calls() > before;
  };
  // Now is later than the last build's start (each run takes milliseconds at least).
  const touch = (file: string) => {
    const now = new Date();
    utimesSync(join(dir, file), now, now);
  };
  return { dir, start, touch };
}

t.test('builds on a fresh checkout, then only when a source changed', async (t) => {
  const p = scratchProject(t);
  t.equal(p.start(), true, 'no previous build: compiles');
  t.equal(p.start(), false, 'nothing changed: no compile');
  p.touch('src/worker/a.ts');
  t.equal(p.start(), true, 'an edited source: compiles');
  t.equal(p.start(), false);
  writeFileSync(join(p.dir, 'src/worker/b.ts'), 'export {};');
  t.equal(p.start(), true, 'an added source');
  unlinkSync(join(p.dir, 'src/worker/b.ts'));
  t.equal(p.start(), true, 'a removed source');
  p.touch('tsconfig.json');
  t.equal(p.start(), true, 'compiler options');
  p.touch('workers/w.ts');
  t.equal(p.start(), true, 'the worker entry');
  rmSync(join(p.dir, 'dist/src/main.js'));
  t.equal(p.start(), true, 'the output is gone');
  t.equal(p.start(), false);
  t.equal(p.start('--force'), true, '--force (npm run build) always compiles');
  t.equal(p.start(), false, 'and its stamp counts');
});

t.test('the console: its type check and bundle run with the build; its .tsx and .css count as sources', async (t) => {
  const p = scratchProject(t);
  mkdirSync(join(p.dir, 'src/console/app'), { recursive: true });
  writeFileSync(join(p.dir, 'src/console/app/tsconfig.json'), '{}');
  writeFileSync(join(p.dir, 'src/console/app/main.tsx'), 'export {};');
  writeFileSync(join(p.dir, 'src/console/app/styles.css'), '');
  // Stand-in for the compiled bundler (tsc would produce it from src/console/build.ts): records its runs, writes the page.
  mkdirSync(join(p.dir, 'dist/src/console'), { recursive: true });
  writeFileSync(join(p.dir, 'dist/src/console/build.js'), [
    "import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';",
    "const root = new URL('../../../', import.meta.url).pathname;",
    "appendFileSync(root + 'bundle-calls', 'x');",
    "mkdirSync(root + 'dist/console', { recursive: true });",
    "writeFileSync(root + 'dist/console/index.html', '');",
  ].join('\n'));
  const bundles = () => {
    try {
      return readFileSync(join(p.dir, 'bundle-calls'), 'utf8').length;
    } catch {
      return 0;
    }
  };
  t.equal(p.start(), true, 'first build');
  t.equal(bundles(), 1, 'the console was bundled');
  t.equal(readFileSync(join(p.dir, 'src/console/app/tsc-calls'), 'utf8').length, 1, 'and type-checked with its own tsconfig');
  t.equal(p.start(), false);
  p.touch('src/console/app/main.tsx');
  t.equal(p.start(), true, 'an edited page');
  p.touch('src/console/app/styles.css');
  t.equal(p.start(), true, 'an edited stylesheet');
  rmSync(join(p.dir, 'dist/console/index.html'));
  t.equal(p.start(), true, 'the console output is gone');
  t.equal(bundles(), 4);
  t.equal(p.start(), false);
});
