/**
 * `regex` / `not_regex` patterns. PostHog matches with Rust `fancy_regex` (unanchored search); we use JS RegExp,
 * compiled once per flag set, with two compatibility shims:
 * - a leading inline flag group such as `(?i)` (common in PostHog filters) becomes the JS flag;
 * - Unicode-only syntax (`\p{L}`, `\u{...}`) selects Unicode mode, where it means what it means in Rust;
 *   other patterns use legacy mode, which also accepts Rust's escaping of any punctuation (`\-`, `\#`).
 * A pattern JS cannot compile is invalid: both operators then return false, as in Rust.
 *
 * Backtracking: Rust's engine is linear for patterns without look-around or back-references; V8 backtracks, so
 * a nested quantifier such as `(a+)+$` can take exponential time on hostile input. Worker threads should run
 * with V8's `--enable-experimental-regexp-engine-on-excessive-backtracks` (settable at start-up through
 * `v8.setFlagsFromString`, before any flag set is compiled), which moves such patterns to a linear engine.
 * That engine cannot run back-references, look-around, or the `i`/`u` flags, which is why legacy mode is
 * preferred above and why validation rejects nested quantifiers combined with any of those
 * ({@link isCatastrophicRegex}).
 */

const INLINE_FLAGS = /^\(\?([imsx]+)\)/;
const UNICODE_ONLY_SYNTAX = /\\[pP]\{|\\u\{/;

interface Plan {
  readonly source: string;
  readonly flags: string;
  readonly unicode: boolean;
}

function plan(pattern: string): Plan | null {
  let source = pattern;
  let flags = '';
  const inline = INLINE_FLAGS.exec(source);
  if (inline) {
    const letters = inline[1]!;
    // JS has no extended (`x`) mode; such patterns stay invalid rather than being misread.
    if (letters.includes('x')) return null;
    source = source.slice(inline[0].length);
    for (const f of letters) if (!flags.includes(f)) flags += f;
  }
  return { source, flags, unicode: UNICODE_ONLY_SYNTAX.test(source) };
}

function tryCompile(source: string, flags: string): RegExp | null {
  try {
    return new RegExp(source, flags);
  } catch {
    return null;
  }
}

export function compileRegex(pattern: string): RegExp | null {
  const p = plan(pattern);
  if (p === null) return null;
  return p.unicode
    ? (tryCompile(p.source, p.flags + 'u') ?? tryCompile(p.source, p.flags))
    : (tryCompile(p.source, p.flags) ?? tryCompile(p.source, p.flags + 'u'));
}

const BACKREFERENCE_OR_LOOKAROUND = /\\[1-9]|\\k<|\(\?<?[=!]/;

/** Whether V8's linear fallback engine can take over this pattern once it backtracks too much. */
export function hasLinearFallback(pattern: string): boolean {
  const re = compileRegex(pattern);
  if (re === null) return true;
  return !re.flags.includes('i') && !re.flags.includes('u') && !BACKREFERENCE_OR_LOOKAROUND.test(pattern);
}

/**
 * Patterns that can take exponential time even with V8's linear fallback: a nested quantifier in a pattern the
 * fallback engine cannot run (back-references, look-around, case-insensitive or Unicode mode).
 */
export function isCatastrophicRegex(pattern: string): boolean {
  return hasNestedQuantifier(pattern) && !hasLinearFallback(pattern);
}

/** Detects `( ...quantifier... )quantifier`, ignoring escapes and character classes. */
export function hasNestedQuantifier(pattern: string): boolean {
  // Stack of "this open group contains a quantifier" flags.
  const stack: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') {
      inClass = true;
    } else if (ch === '(') {
      stack.push(false);
    } else if (ch === ')') {
      const inner = stack.pop() ?? false;
      const next = pattern[i + 1];
      const quantified = next === '*' || next === '+' || next === '?' || next === '{';
      if (inner && quantified && next !== '?') return true;
      if ((inner || quantified) && stack.length > 0) stack[stack.length - 1] = true;
    } else if ((ch === '*' || ch === '+' || ch === '{') && stack.length > 0) {
      stack[stack.length - 1] = true;
    }
  }
  return false;
}
