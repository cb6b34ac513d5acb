// The documentation's commands are run, not just read: every shell block of the README and of the Markdown files
// under src/, config/, bench/ and test/ whose fence says `sh runnable` runs in bash, in order, against a Quill started
// for its file on a fresh data directory, and must exit 0 (curl runs with -f, so an error answer fails it).
// Substitutions, so that a block reads as a user types it: the server's address for http://127.0.0.1:8000, its
// data directory for ./data, a fresh directory for /tmp/quill-backup; PROJECT_API_KEY and PERSONAL_API_KEY hold its
// keys, as the README asks a user to export them. Every `npm run <script>` named anywhere in them must exist, and
// every environment variable Quill reads has a row in config/README.md.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import t from 'tap';
import { ENV_NAMES } from '../../src/config/schema.js';
import { PERSONAL_KEY, PROJECT_KEY, ROOT, removeDir, startQuill } from '../helpers/quill.js';

const DOC_ROOTS = ['src', 'config', 'bench', 'test'];

function markdownFiles(): string[] {
  const found = [join(ROOT, 'README.md')];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  for (const root of DOC_ROOTS) walk(join(ROOT, root));
  return found;
}

/** The bodies of a Markdown text's fenced blocks whose info string is `sh runnable`. */
export function runnableBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh runnable[ \t]*\n([\s\S]*?)^```[ \t]*$/gm)].map((m) => m[1]!);
}

const docs = markdownFiles().map((path) => ({ path, text: readFileSync(path, 'utf8') }));

t.test('every npm script the documentation names exists', async (t) => {
  const scripts = new Set(Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts));
  scripts.add('test').add('start'); // npm's own short forms name scripts too
  let named = 0;
  for (const { path, text } of docs) {
    for (const m of text.matchAll(/npm run (?:-s )?([a-z][\w:-]*)/g)) {
      named++;
      t.ok(scripts.has(m[1]!), `${relative(ROOT, path)}: npm run ${m[1]} is a script of package.json`);
    }
  }
  t.ok(named >= 10, `${named} npm run commands found`);
});

t.test('every relative link of the documentation names a file that exists', async (t) => {
  let links = 0;
  for (const { path, text } of docs) {
    for (const m of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue; // http(s): and mailto: links leave the repository
      links++;
      t.ok(existsSync(join(dirname(path), target)), `${relative(ROOT, path)} links to ${target}`);
    }
  }
  t.ok(links >= 10, `${links} relative links`);
});

t.test('every environment variable Quill reads is in the configuration table', async (t) => {
  const table = readFileSync(join(ROOT, 'config/README.md'), 'utf8');
  const names = Object.values(ENV_NAMES);
  t.ok(names.length >= 20, `${names.length} variables`);
  for (const name of names) t.match(table, new RegExp(`^\\| \`${name}\` \\|`, 'm'), `${name} has a row`);
});

t.test('the runnable shell blocks run', async (t) => {
  const withBlocks = docs.map((d) => ({ ...d, blocks: runnableBlocks(d.text) })).filter((d) => d.blocks.length > 0);
  const total = withBlocks.reduce((n, d) => n + d.blocks.length, 0);
  t.ok(withBlocks.some((d) => d.path === join(ROOT, 'README.md')), 'the README has runnable blocks');
  t.ok(total >= 3, `${total} runnable blocks in ${withBlocks.length} files`);
  for (const doc of withBlocks) {
    const name = relative(ROOT, doc.path);
    const q = await startQuill();
    const scratch = mkdtempSync(join(tmpdir(), 'quill-docs-'));
    try {
      for (const [i, block] of doc.blocks.entries()) {
        const script = block
          .replaceAll('http://127.0.0.1:8000', q.base)
          .replaceAll('/tmp/quill-backup', join(scratch, `backup-${i}`))
          .replace(/(^|[\s=])\.\/data\b/g, `$1${q.dataDir}`);
        const run = spawnSync('bash', ['-eo', 'pipefail', '-c', script], {
          cwd: ROOT,
          env: { ...process.env, PROJECT_API_KEY: PROJECT_KEY, PERSONAL_API_KEY: PERSONAL_KEY, QUILL_DATA_DIR: q.dataDir },
          encoding: 'utf8',
          timeout: 120_000,
        });
        t.equal(run.status, 0, `${name}, runnable block ${i + 1} exits 0`, {
          block,
          stdout: run.stdout?.slice(-2000),
          stderr: run.stderr?.slice(-2000),
        });
      }
    } finally {
      await q.stop();
      removeDir(q.dataDir);
      removeDir(scratch);
    }
  }
});
