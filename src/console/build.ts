/**
 * Builds the console (src/console/app, Preact + uPlot) into dist/console with esbuild: one ES-module entry, the
 * pages that draw charts split into chunks loaded on demand, file names carrying their content hash, and a gzip and
 * a brotli copy of every text file (the front serves them from memory, src/front/console-assets.ts). Prints the
 * compressed size of what the first page loads. Run by `npm run build` after `tsc`.
 */
import { build, type Plugin } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { hogqlFunctionNames } from '../domain/hogql/function-names.js';
import { snippetMethods } from './snippet-methods.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const APP = join(ROOT, 'src/console/app');
const OUT = join(ROOT, 'dist/console');
const PREFIX = '/console/';

export interface ConsoleBuild {
  /** Files the first page loads (the entry script, its static imports and the stylesheet). */
  firstPage: string[];
  /** Their total size, brotli-compressed, in bytes. */
  firstPageBrotli: number;
  firstPageGzip: number;
}

function indexHtml(script: string, style: string | null): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quill</title>
<link rel="icon" href="data:,">
${style ? `<link rel="stylesheet" href="${PREFIX}${style}">\n` : ''}<script type="module" src="${PREFIX}${script}"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>
`;
}

/**
 * The flag form checks filters with the validator the API runs (src/domain/flags/validate.ts), which asks the
 * pattern module whether RE2 takes a regex. RE2 (re2js) would add ~40 KB brotli to the console's first page (24.5
 * → 64.7 KB measured), so the browser gets a stand-in that accepts every pattern: the API refuses a bad one with
 * RE2's reason when the form is saved. Any other use of the module from the console fails the build (the
 * stand-in exports nothing else).
 */
const patternsInTheBrowser: Plugin = {
  name: 'patterns-in-the-browser',
  setup(b) {
    b.onResolve({ filter: /[/\\]patterns[/\\]regex(\.js)?$/ }, () => ({ path: join(APP, 'pattern-check.ts') }));
  },
};

export async function buildConsole(): Promise<ConsoleBuild> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const result = await build({
    entryPoints: { main: join(APP, 'main.tsx') },
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    sourcemap: false,
    target: ['chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    outdir: OUT,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [patternsInTheBrowser],
    // The HTML snippet's stub queues the methods of the posthog-js this server serves (src/domain/html-snippet.ts).
    // The SQL editor completes the HogQL functions the evaluator knows (src/domain/hogql/function-names.ts). As a
    // string: esbuild inlines a string where it is used (the SQL chunk), while an array value goes into a chunk
    // shared with the first page.
    define: { __POSTHOG_SNIPPET_METHODS__: JSON.stringify(snippetMethods()), __HOGQL_FUNCTIONS_JSON__: JSON.stringify(JSON.stringify(hogqlFunctionNames())) },
  });
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((f) => outputs[f]!.entryPoint?.endsWith('main.tsx') && f.endsWith('.js'))!;
  const style = Object.keys(outputs).find((f) => f.endsWith('.css')) ?? null;
  writeFileSync(join(OUT, 'index.html'), indexHtml(basename(entry), style ? basename(style) : null));

  // What the first page loads: index.html, the entry, its static imports (transitively), the stylesheet.
  const firstPage = new Set<string>([join(OUT, 'index.html')]);
  const visit = (file: string) => {
    const path = resolve(ROOT, file);
    if (firstPage.has(path)) return;
    firstPage.add(path);
    for (const imp of outputs[file]!.imports) if (imp.kind === 'import-statement') visit(imp.path);
  };
  visit(entry);
  if (style) firstPage.add(resolve(ROOT, style));

  let firstPageBrotli = 0;
  let firstPageGzip = 0;
  for (const name of readdirSync(OUT)) {
    const path = join(OUT, name);
    const body = readFileSync(path);
    const gz = gzipSync(body, { level: 9 });
    const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
    writeFileSync(`${path}.gz`, gz);
    writeFileSync(`${path}.br`, br);
    if (firstPage.has(path)) {
      firstPageBrotli += br.length;
      firstPageGzip += gz.length;
    }
  }
  return { firstPage: [...firstPage].map((f) => basename(f)), firstPageBrotli, firstPageGzip };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildConsole().then(
    // stderr: `npm run quill` may build first, and prints a key on stdout.
    (b) => console.error(`console: dist/console built; first page ${b.firstPage.length} files, ${(b.firstPageBrotli / 1024).toFixed(1)} KB brotli, ${(b.firstPageGzip / 1024).toFixed(1)} KB gzip`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
