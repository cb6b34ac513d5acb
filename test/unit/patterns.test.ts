/**
 * The one pattern module (src/domain/patterns/): RE2 syntax and semantics in both dialects, ClickHouse's
 * replacement notation, LIKE and path wildcards without backtracking. Hostile inputs are checked to finish (their
 * time is linear by construction; no wall-clock threshold here — the fuzz matrix measures flags' latency beside
 * them over HTTP).
 */
import t from 'tap';
import { compileRegex, MAX_PROGRAM_SIZE, PatternError, PatternWorkError, quoteRegex, regexProblem, requireRegex } from '../../src/domain/patterns/regex.js';
import { compileLike, PATH_WILDCARD, SQL_LIKE } from '../../src/domain/patterns/like.js';
import { likeRegex } from '../../src/domain/analytics/action-filter.js';

t.test('RE2 syntax as ClickHouse and Rust read it', async (t) => {
  const ch = (p: string) => compileRegex(p, 'clickhouse');
  t.ok(ch('(?i)^sign')!.test('SIGN up'), '(?i) at the start');
  t.ok(ch('^a(?i)b')!.test('aB'), '(?i) in the middle');
  t.notOk(ch('^sign')!.test('SIGN up'), 'case-sensitive otherwise');
  t.ok(ch('welcome')!.test('/en/welcome?x'), 'unanchored');
  t.ok(ch('sign\\-up')!.test('/sign-up'), 'escaped punctuation');
  t.ok(ch('[[:digit:]]{3}')!.test('ab123'), 'POSIX classes');
  t.ok(ch('(?P<page>\\w+)')!.test('x'), 'Python-style named groups');
  t.ok(ch('\\pL+')!.test('é'), 'Unicode classes');
  t.ok(ch('\\Qa.b\\E')!.test('xa.by'), '\\Q…\\E quotes');
  t.notOk(ch('\\Qa.b\\E')!.test('axb'));
  t.ok(ch('^.$')!.test('😀'), '. is one code point');
  t.equal(ch('(?i'), null, 'a broken pattern does not compile');
  t.equal(ch('*'), null);
  t.equal(ch('(a)\\1'), null, 'no back-references');
  t.equal(ch('a(?=b)'), null, 'no look-ahead');
  t.equal(ch('a{1001}'), null, 'repetition counts stop at 1000');
});

t.test('answers remembered for short texts stay right past the memo size', async (t) => {
  const re = compileRegex('^id_[0-9]*[02468]$', 'rust')!;
  let wrong = 0;
  for (let round = 0; round < 3; round++) for (let i = 0; i < 1500; i++) if (re.test(`id_${i}`) !== (i % 2 === 0)) wrong++;
  t.equal(wrong, 0, '4,500 answers over 1,500 texts, the memo cleared on the way');
  t.equal(re.test(`id_${'1'.repeat(300)}2`), true, 'a long text is matched, not remembered');
});

t.test('dialects: ClickHouse lets . match a line break, Rust does not', async (t) => {
  t.ok(compileRegex('a.b', 'clickhouse')!.test('a\nb'));
  t.notOk(compileRegex('a.b', 'rust')!.test('a\nb'));
  t.ok(compileRegex('(?s)a.b', 'rust')!.test('a\nb'), '(?s) turns it on');
  t.notOk(compileRegex('(?-s)a.b', 'clickhouse')!.test('a\nb'), '(?-s) turns it off');
});

t.test('exec and replace, in ClickHouse notation', async (t) => {
  const re = requireRegex('(\\d+)-(\\d+)', 'clickhouse');
  t.same(re.exec('ids 12-34 and 5-6'), ['12-34', '12', '34']);
  t.equal(re.exec('none'), null);
  t.same(requireRegex('a(x)?', 'clickhouse').exec('a'), ['a', ''], 'an unmatched group is empty');
  t.equal(re.replace('12-34 and 5-6', '\\2-\\1', true), '34-12 and 6-5');
  t.equal(re.replace('12-34 and 5-6', '[\\0]', false), '[12-34] and 5-6');
  t.equal(re.replace('1-2', 'a\\\\b$1', true), 'a\\b$1', '\\\\ is a backslash; $ is literal');
  t.equal(requireRegex('x*', 'clickhouse').replace('abc', '-', true), '-a-b-c-', 'empty matches advance');
  t.equal(requireRegex('x*', 'clickhouse').replace('a😀', '-', true), '-a-😀-', 'by whole code points');
  t.equal(requireRegex('😀', 'clickhouse').replace('a😀b😀', '\\0\\0', true), 'a😀😀b😀😀', 'offsets in UTF-16 units');
});

t.test('problems are explained; limits are enforced', async (t) => {
  t.match(regexProblem('(unclosed', 'rust'), /Invalid regular expression: \(unclosed/);
  t.equal(regexProblem('ok', 'rust'), null);
  t.ok(caught(() => requireRegex('(', 'clickhouse')) instanceof PatternError, 'requireRegex throws a PatternError');
  // Random ids share few prefixes, so RE2 cannot fold the alternation into a short trie.
  let seed = 7;
  const id = () => (seed = (seed * 48271) % 2147483647).toString(36);
  const huge = `(${Array.from({ length: 5_000 }, () => `${id()}${id()}`).join('|')})`;
  t.match(regexProblem(huge, 'clickhouse'), new RegExp(`at most ${MAX_PROGRAM_SIZE}`), 'a program too large is refused');
  t.match(regexProblem('a'.repeat(300_000), 'clickhouse'), /too long/);
  t.equal(compileRegex(quoteRegex('a.b*(c)[d]{e}|$^\\'), 'clickhouse')!.exec('xa.b*(c)[d]{e}|$^\\y')![0], 'a.b*(c)[d]{e}|$^\\', 'quoteRegex is literal');
});

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

t.test('a match the NFA would take too long over is refused, not run', async (t) => {
  // RE2's DFA cannot hold this pattern's states, so it falls back to the NFA: 3.5 s for 1 MB of a/b here.
  const re = requireRegex('[ab]*a[ab]{999}c', 'clickhouse');
  let seed = 1;
  const text = Array.from({ length: 1_000_000 }, (_, i) => (i % 1000 === 999 ? 'c' : (seed = (seed * 48271) % 2147483647) & 1 ? 'a' : 'b')).join('');
  const error = caught(() => re.test(text));
  t.ok(error instanceof PatternWorkError, 'a PatternWorkError (this checks the guard still reaches re2js\'s NFA)');
  t.match((error as Error).message, /needs more work than allowed to match a value of 1000000 characters/);
  await new Promise((r) => setImmediate(r));
  t.equal(re.test(text.slice(0, 4_000)), false, 'a shorter value is matched by the same pattern (no c has 1,000 a or b before it)');
  await new Promise((r) => setImmediate(r));
  t.equal(re.test(`a${'b'.repeat(999)}c`), true);
  t.equal(compileRegex('a+c', 'clickhouse')!.test(text), true, 'a DFA-friendly pattern matches the long value');
  // The meter counts every NFA run until the event loop turns: a scan of many values cannot add them up.
  await new Promise((r) => setImmediate(r));
  // exec reports groups, which takes the NFA on a value this long: 2,000 × ~1,000 instructions a call.
  const value = text.slice(0, 2_000);
  let refusedAt = -1;
  for (let i = 0; i < 5 && refusedAt < 0; i++) if (caught(() => re.exec(value)) instanceof PatternWorkError) refusedAt = i;
  t.ok(refusedAt >= 1, `several values pass, then one is refused in the same stretch (at ${refusedAt})`);
  await new Promise((r) => setImmediate(r));
  t.equal(re.exec(value), null, 'the meter starts again once the event loop turns');
});

t.test('catastrophic patterns for a backtracking engine finish on long hostile input', async (t) => {
  const evil = `${'a'.repeat(200_000)}!`;
  for (const p of ['(a+)+$', '(a|aa)+$', '(a|a)*b', '(?i)(a+)+$', '(\\pL+)+$', '(.*a){20}$', '^(\\w+\\s?)*$']) {
    for (const dialect of ['clickhouse', 'rust'] as const) t.equal(compileRegex(p, dialect)!.test(evil), false, `${p} (${dialect})`);
  }
  t.equal(requireRegex('(a+)+b', 'clickhouse').replace(evil, 'x', true), evil, 'replace too');
  t.equal(requireRegex('(a+)+(b)', 'clickhouse').exec(evil), null, 'exec too');
});

t.test('LIKE without backtracking', async (t) => {
  const like = (p: string, s: string, caseless = false) => compileLike(p, SQL_LIKE, caseless).test(s);
  t.ok(like('%/sign_up%', 'https://x/sign-up'), '_ is one character');
  t.notOk(like('%/sign_up%', 'https://x/signup'));
  t.ok(like('%/sign\\_up%', 'https://x/sign_up'), '\\_ a literal underscore');
  t.notOk(like('%/sign\\_up%', 'https://x/sign-up'));
  t.ok(like('%a.b?%', 'xa.b?y'), 'regex characters are literal');
  t.notOk(like('%Welcome%', '/welcome'), 'case-sensitive');
  t.ok(like('%Welcome%', '/welcome', true), 'ILIKE folds case');
  t.ok(like('abc', 'abc'));
  t.notOk(like('abc', 'abcd'), 'anchored at both ends');
  t.notOk(like('abc%', 'xabc'));
  t.ok(like('a%c', 'abbbc'));
  t.notOk(like('a%c', 'abbbcd'));
  t.ok(like('a%b%c', 'a-b-b-c'), 'middle segments at their leftmost occurrence');
  t.ok(like('%ab%ab', 'ab-ab-ab'), 'the last segment is anchored at the end');
  t.notOk(like('%ab%ab', 'abab-'));
  t.ok(like('_', '😀'), '_ is one code point');
  t.ok(like('%_', '😀'));
  t.notOk(like('__', '😀'));
  t.ok(like('a%_😀', 'ax😀'));
  t.ok(like('%', ''), '% matches nothing too');
  t.notOk(like('_', ''));
  t.ok(like('', ''));
  const hostile = `${'%a'.repeat(5_000)}%b`;
  t.notOk(like(hostile, 'a'.repeat(100_000)), 'thousands of % against a long value finish');
  t.ok(like(hostile, `${'a'.repeat(100_000)}b`));
  t.notOk(like(`%${'_'.repeat(1000)}b`, 'a'.repeat(100_000)));
});

t.test('path groupings: * is any run, nothing else is special', async (t) => {
  const w = (p: string, s: string) => compileLike(p, PATH_WILDCARD).test(s);
  t.ok(w('/docs/*', '/docs/a/b'));
  t.notOk(w('/docs/*', '/blog/docs/a'));
  t.ok(w('*/a_b/%', '/x/a_b/%'), '_ and % are literal');
  t.notOk(w('*/a_b/%', '/x/acb/y'));
  t.notOk(w('*a'.repeat(3_000) + '*b', 'a'.repeat(50_000)));
});

t.test("actions' URL contains: a LIKE as an anchored RE2 pattern", async (t) => {
  const like = (pattern: string, text: string) => compileRegex(likeRegex(pattern), 'clickhouse')!.test(text);
  t.ok(like('%/sign_up%', 'https://x/sign-up'));
  t.notOk(like('%/sign_up%', 'https://x/signup'));
  t.ok(like('%/sign\\_up%', 'https://x/sign_up'));
  t.ok(like('%(x)[y]{z}|^$+*%', 'q(x)[y]{z}|^$+*q'));
  t.ok(like('%😀_%', 'a😀😀b'), 'astral characters stay whole');
  t.ok(like('%a%', 'line\nwith a'), '% spans line breaks');
});
