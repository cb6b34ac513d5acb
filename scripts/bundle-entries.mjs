// Build step after `tsc`: each entry point of the server is bundled, in place, with Quill's own modules and the
// ESM-only packages that are many small files, into one file. Node otherwise resolves, reads and links ~1,100
// modules per thread at every start (typebox alone is ~680 files): about a second of CPU for the front and again
// for each shard worker, paid by every start-up, every worker restart after a crash and every test server.
// Packages with native code or their own threads (lmdb, msgpackr, uWebSockets.js, piscina, pino, …) stay
// external and load from node_modules as before. Paths to files beside the code come from src/package-root.ts,
// which works at any depth, so inlining a module does not move what it reads.
import { build } from 'esbuild';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The files Node starts from: the front (npm start), the shard worker module (imported by shard-worker.cjs), the CLI. */
const ENTRIES = ['dist/src/main.js', 'dist/workers/shard-worker.js', 'dist/src/cli/quill.js'];
/** Pure-ESM packages inlined into the bundles; every other package import stays a runtime import. */
const INLINED = new Set(['typebox']);

function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (INLINED.has(packageName(args.path)) ? undefined : { external: true }));
  },
};

for (const entry of ENTRIES) {
  const file = join(root, entry);
  await build({
    entryPoints: [file],
    outfile: file,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    plugins: [externalPackages],
  });
}
