/**
 * Every user-supplied regular expression in Quill — flag conditions, cohort and property filters, actions' URL,
 * href and text matching, path cleaning rules, HogQL `match`, `=~`, `extract` and `replaceRegexp*` — is compiled
 * here, and only here.
 *
 * Why one module: a worker thread owes acknowledgements and flag answers every few milliseconds, and a
 * backtracking engine (JavaScript's RegExp) takes exponential time on a pattern such as `(a+)+$` against
 * `aaaa…!`. A guard at some call sites is a hole at the others, so the rule lives in the mechanism: patterns are
 * matched by RE2 (the `re2js` port, pure JavaScript, a lazy DFA with an NFA fallback), whose time is linear in
 * the input for every pattern it accepts. RE2 is also what ClickHouse's `match` — and so PostHog's analytics —
 * use, and PostHog's flag engine (Rust `regex`) has the same syntax for the patterns it runs in linear time.
 *
 * Chosen by measurement (bench/regex.bench.ts keeps the comparison with V8's RegExp; the others were measured once,
 * figures in src/domain/patterns/README.md): V8's own linear engine (`--enable-experimental-regexp-engine`) refuses `i` and `u` and was
 * slower than re2js; re2-wasm aborted the process once its 16 MB heap filled (compiled patterns are never freed);
 * the native `re2` binding has no prebuilt binary reachable here, compiles from source at install (47 s) and costs
 * ~600 ns a match crossing into C++.
 *
 * Dialects differ in one default only: ClickHouse compiles `match` patterns with `.` matching a line break (its
 * documented difference from RE2); Rust's `regex` (flags) does not. `(?s)`, `(?-s)`, `(?i)`, `(?m)` and `(?U)`
 * work as in RE2 in both.
 *
 * What differs from JavaScript syntax (documented in src/domain/patterns/README.md): no back-references (`\1`), no look-around
 * (`(?=`, `(?!`, `(?<=`, `(?<!`), repetition counts at most 1000, `\d \w \s \b` are ASCII, inline flags `(?i)`
 * anywhere, `(?P<name>…)` groups, POSIX classes `[[:alpha:]]`, `\pL`, `\Q…\E`, `\A`, `\z`. A pattern RE2 does
 * not accept is invalid: validation refuses it where patterns are stored (flags, actions, cohorts), and a filter
 * that carries one matches nothing, as ClickHouse and PostHog's flag engine do.
 */
import { RE2JS } from 're2js';
import { AnalyticsInputError } from '../analytics/errors.js';

export type Dialect = 'clickhouse' | 'rust';

/** A compiled pattern. Matching time is linear in the text's length (times the pattern's size). */
export interface LinearRegex {
  readonly source: string;
  /** Unanchored search: whether the pattern matches anywhere in `text`. */
  test(text: string): boolean;
  /** The first match as `[whole, group 1, …]` (an unmatched group is ''), or null. */
  exec(text: string): string[] | null;
  /**
   * `text` with the first (or every) match replaced by `replacement`, in ClickHouse's notation: `\0` the whole
   * match, `\1`…`\9` a group, `\\` a backslash; everything else literal.
   */
  replace(text: string, replacement: string, all: boolean): string;
}

/**
 * The largest compiled program accepted, in RE2 instructions (a 1,000-way alternation of 10-character ids is
 * ~11,000). Compiling one takes tens of milliseconds here, and the NFA's cost per character grows with it.
 */
export const MAX_PROGRAM_SIZE = 20_000;
/** Longest pattern text looked at; longer ones are refused before parsing (parsing is linear, but not free). */
export const MAX_PATTERN_LENGTH = 256 * 1024;

/**
 * The most work RE2's NFA may do in one stretch of a thread's synchronous work (one macrotask), in text characters
 * times program instructions.
 *
 * Linear is not yet bounded: RE2 matches most patterns with a lazy DFA (a few ns per character), but a pattern
 * whose DFA needs too many states (`[ab]*a[ab]{999}c`) falls back to the NFA, which steps every live instruction
 * at every character: measured ~3.5 ns per character and instruction here, 3.5 s for a 1 MB value against a
 * 1,000-instruction pattern, during which the thread answers nothing. And a scan matches one block's dictionary
 * values in one stretch (src/worker/analytics/block-filter.ts), so a bound per match would still multiply by the
 * values. The meter adds up every NFA run of the stretch and is reset when the call stack next empties;
 * a match that would take it past the bound is not run. With captures (`extract`, `replaceRegexp*`, path cleaning)
 * every match runs the NFA, slower still: 2·10⁷ units measured 230 ms of one stretch in the hostile-queries test,
 * so the bound is 5·10⁶, ~20-60 ms. A single value up to 250 characters is never refused on its own
 * (MAX_PROGRAM_SIZE × 250 is the bound); past that, only patterns too large for RE2's fast matcher meet it.
 */
export const NFA_WORK_LIMIT = 5_000_000;

let nfaWork = 0;
let meterResetQueued = false;

/** Charges `work` to this stretch's meter, or throws when it would pass NFA_WORK_LIMIT. */
function chargeNfa(work: number, source: string, chars: number): void {
  if (nfaWork + work > NFA_WORK_LIMIT) {
    throw new PatternWorkError(
      `The regular expression ${clip(source)} needs more work than allowed to match ${chars > 1000 ? `a value of ${chars} characters` : 'these values'} (RE2 could not use its fast matcher for it; a simpler pattern would not have this limit).`,
    );
  }
  nfaWork += work;
  if (!meterResetQueued) {
    meterResetQueued = true;
    // Not I/O: the meter's window is the current synchronous stretch, which ends when the call stack empties (long
    // work awaits its slicer between units and yields to the event loop every few ms: src/worker/analytics/slices.ts).
    queueMicrotask(() => {
      nfaWork = 0;
      meterResetQueued = false;
    });
  }
}

/** Texts up to this length have their answers remembered per pattern (at most MEMO_ENTRIES of them). */
const MEMO_TEXT_LENGTH = 256;
const MEMO_ENTRIES = 512;

/** A pattern that cannot be used: a 400 wherever a request brought it (src/domain/analytics/errors.ts). */
export class PatternError extends AnalyticsInputError {
  constructor(detail: string) {
    super(null, detail, 'invalid_regex');
  }
}

/**
 * A match that would need more than NFA_WORK_LIMIT: flags treat it as PostHog's engine treats a pattern past its
 * backtrack limit (no match, for both operators); analyses and SQL answer 400 with this message.
 */
export class PatternWorkError extends PatternError {}

/** What the guard needs of re2js's engine object (re2js 2.10, pinned; test/unit/patterns.test.ts checks it). */
interface Re2Engine {
  doExecuteNFA(input: { endPos(): number }, ...rest: unknown[]): unknown;
}

class Re2Pattern implements LinearRegex {
  constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {
    // The DFA, the one-pass matcher and the bit-state backtracker (inputs short enough for a 256 Kbit visited set)
    // are bounded by construction; the NFA is the one engine whose work grows with text × program. It is reached
    // only through this method, so the bound goes there, per compiled pattern.
    const engine = re.re2() as unknown as Re2Engine;
    const nfa = engine.doExecuteNFA;
    const program = re.programSize();
    engine.doExecuteNFA = function guarded(this: Re2Engine, input, ...rest) {
      chargeNfa(input.endPos() * program, source, input.endPos());
      return nfa.call(this, input, ...rest);
    };
  }

  /**
   * Answers for short texts, per pattern: a flag set is evaluated against the same few property values again and
   * again (a person polling its flags), and a Map lookup (~30 ns) is a tenth of an RE2 match here.
   */
  private readonly recent = new Map<string, boolean>();

  test(text: string): boolean {
    if (text.length > MEMO_TEXT_LENGTH) return this.re.test(text);
    let hit = this.recent.get(text);
    if (hit === undefined) {
      hit = this.re.test(text);
      if (this.recent.size >= MEMO_ENTRIES) this.recent.clear();
      this.recent.set(text, hit);
    }
    return hit;
  }

  exec(text: string): string[] | null {
    const m = this.re.exec(text);
    if (m === null) return null;
    const out: string[] = [];
    for (let i = 0; i < m.length; i++) out.push((m[i] as string | undefined) ?? '');
    return out;
  }

  replace(text: string, replacement: string, all: boolean): string {
    let out = '';
    let from = 0;
    const matcher = this.re.matcher(text);
    while (from <= text.length && matcher.find(from)) {
      const start = matcher.start();
      const end = matcher.end();
      out += text.slice(from, start) + expand(replacement, (g) => (g <= matcher.groupCount() ? (matcher.group(g) ?? '') : ''));
      if (!all) return out + text.slice(end);
      if (end === start) {
        // An empty match: keep the next character and search after it, so the loop always advances.
        if (end >= text.length) return out;
        const step = text.codePointAt(end)! > 0xffff ? 2 : 1;
        out += text.slice(end, end + step);
        from = end + step;
      } else {
        from = end;
      }
    }
    return out + text.slice(from);
  }
}

/** ClickHouse's replacement notation: `\0`-`\9` are groups, `\\` is a backslash. */
function expand(replacement: string, group: (n: number) => string): string {
  if (!replacement.includes('\\')) return replacement;
  let out = '';
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i]!;
    const next = replacement[i + 1];
    if (c === '\\' && next !== undefined && next >= '0' && next <= '9') {
      out += group(next.charCodeAt(0) - 48);
      i++;
    } else if (c === '\\' && next === '\\') {
      out += '\\';
      i++;
    } else {
      out += c;
    }
  }
  return out;
}

function compileOrThrow(pattern: string, dialect: Dialect): LinearRegex {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new PatternError(`The regular expression is too long (${pattern.length} characters; at most ${MAX_PATTERN_LENGTH}).`);
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, dialect === 'clickhouse' ? RE2JS.DOTALL : 0);
  } catch (error) {
    throw new PatternError(`Invalid regular expression: ${clip(pattern)} (${describe(error)})`);
  }
  if (re.programSize() > MAX_PROGRAM_SIZE) {
    throw new PatternError(`The regular expression is too large to match efficiently (${re.programSize()} instructions; at most ${MAX_PROGRAM_SIZE}).`);
  }
  return new Re2Pattern(pattern, re);
}

function clip(pattern: string): string {
  return pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern;
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^error parsing regexp: /, '');
}

/**
 * Compiled patterns by dialect and text, least recently used dropped beyond CACHE_SIZE. Flag sets, scans and
 * HogQL expressions compile the same few patterns again and again; RE2's DFA state cache (at most 8 MB a pattern,
 * usually a few KB) lives with the compiled pattern, so the bound also bounds that memory.
 */
const CACHE_SIZE = 128;
const cache = new Map<string, LinearRegex | PatternError>();

function cached(pattern: string, dialect: Dialect): LinearRegex | PatternError {
  const key = `${dialect}\u0000${pattern}`;
  let hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  try {
    hit = compileOrThrow(pattern, dialect);
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    hit = error;
  }
  if (pattern.length <= 4096) {
    cache.set(key, hit);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  return hit;
}

/** The compiled pattern, or null when RE2 does not accept it (a filter holding it matches nothing). */
export function compileRegex(pattern: string, dialect: Dialect): LinearRegex | null {
  const r = cached(pattern, dialect);
  return r instanceof PatternError ? null : r;
}

/** The compiled pattern; an invalid one throws a PatternError whose message says why (for 400 answers). */
export function requireRegex(pattern: string, dialect: Dialect): LinearRegex {
  const r = cached(pattern, dialect);
  if (r instanceof PatternError) throw r;
  return r;
}

/** Why a pattern is refused, or null when it compiles (validation of stored flags, actions and rules). */
export function regexProblem(pattern: string, dialect: Dialect): string | null {
  const r = cached(pattern, dialect);
  return r instanceof PatternError ? r.message : null;
}

/** A pattern that matches `text` literally. */
export function quoteRegex(text: string): string {
  return RE2JS.quote(text);
}
