/**
 * Patterns: what the one pattern module (src/domain/patterns/) costs against V8's backtracking RegExp (the
 * baseline, same process, same inputs), and whether any regular expression literal in the server's own code
 * backtracks on hostile text.
 *
 * 1. engines: ns per match of typical flag and filter patterns over URL-like values, V8 RegExp vs the module
 *    (RE2 via re2js); then hostile patterns over a long value, where V8 is stopped at a bounded input length.
 * 2. audit: every regex literal under src/ (the browser console excluded) against 20,000-character runs of the
 *    characters that make patterns backtrack; the slowest input per literal, in ms.
 *
 * `node dist/bench/regex.bench.js` prints one JSON document.
 */
import { readFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { compileRegex } from '../src/domain/patterns/regex.js';
import { compileLike, SQL_LIKE } from '../src/domain/patterns/like.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function nsPerCall(n: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(n, 20_000); i++) fn(i);
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - t) / n;
}

function engines() {
  const values = Array.from({ length: 1000 }, (_, i) => `https://example.com/path/${i}/product?id=${i * 7}&ref=campaign_${i % 13}`);
  const patterns = ['example\\.com/path/\\d+/product', '^https://[a-z]+\\.com/', 'campaign_1[0-2]$', '(?i)PRODUCT', '^(user_1|user_22|user_333)$'];
  const typical = patterns.map((p) => {
    const js = p.startsWith('(?i)') ? new RegExp(p.slice(4), 'i') : new RegExp(p);
    const re2 = compileRegex(p, 'rust')!;
    const v8Ns = nsPerCall(200_000, (i) => js.test(values[i % 1000]!));
    const re2Ns = nsPerCall(200_000, (i) => re2.test(values[i % 1000]!));
    return { pattern: p, v8_ns: Math.round(v8Ns), re2_ns: Math.round(re2Ns), ratio: +(re2Ns / v8Ns).toFixed(1) };
  });
  const hostile = [
    { pattern: '(a+)+$', text: (n: number) => `${'a'.repeat(n)}!` },
    { pattern: '(.*a){12}$', text: (n: number) => `${'a'.repeat(n)}!` },
    { pattern: '^(\\w+\\s?)*$', text: (n: number) => `${'a'.repeat(n)}!` },
  ].map(({ pattern, text }) => {
    const re2 = compileRegex(pattern, 'clickhouse')!;
    const long = text(100_000);
    const t0 = performance.now();
    re2.test(long);
    const re2Ms = performance.now() - t0;
    // V8 on 26 characters already takes long for the first; the sizes stop where it reaches ~0.1-1 s.
    const js = new RegExp(pattern);
    const v8 = [16, 20, 24, 26].map((n) => {
      const t = performance.now();
      js.test(text(n));
      return { chars: n, ms: +(performance.now() - t).toFixed(1) };
    });
    return { pattern, re2_ms_100k_chars: +re2Ms.toFixed(2), v8 };
  });
  const like = compileLike(`${'%a'.repeat(5000)}%b`, SQL_LIKE);
  const t1 = performance.now();
  like.test('a'.repeat(100_000));
  return { typical, hostile, like_5000_percent_100k_chars_ms: +(performance.now() - t1).toFixed(2) };
}

function audit() {
  const files = execSync("git ls-files 'src/**/*.ts'", { cwd: ROOT }).toString().trim().split('\n').filter((f) => !f.startsWith('src/console/'));
  const literals: { at: string; text: string }[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(`${ROOT}/${file}`, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        literals.push({ at: `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`, text: node.getText() });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const runs = ['1', 'a', ' ', '.', '-', '/', '0', 'e', ':', '=', '\t', '\\', '"', '%', '_', 'A', '9.', 'a1', '1 ', '%a', '.a', '=a', '-1'];
  const results = literals.map(({ at, text }) => {
    const end = text.lastIndexOf('/');
    const re = new RegExp(text.slice(1, end), text.slice(end + 1).replace(/[gy]/g, ''));
    let worst = 0;
    for (const run of runs) {
      for (const head of ['', '1', 'a', '-', '"']) {
        for (const tail of ['!', '\u0000', 'x', '']) {
          const input = head + run.repeat(Math.ceil(20_000 / run.length)) + tail;
          const t = performance.now();
          re.test(input);
          worst = Math.max(worst, performance.now() - t);
        }
      }
    }
    return { at, regex: text, worst_ms: +worst.toFixed(2) };
  });
  results.sort((a, b) => b.worst_ms - a.worst_ms);
  return { literals: results.length, slowest: results.slice(0, 5) };
}

console.log(JSON.stringify({ bench: 'regex', at: new Date().toISOString(), engines: engines(), audit: audit() }, null, 2));
