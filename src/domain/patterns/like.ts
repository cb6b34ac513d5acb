/**
 * SQL LIKE (`%` any run of characters, `_` one character, `\` escapes the next) and the path groupings' `*`
 * wildcards, matched without a regular expression.
 *
 * Why not a RegExp: `^.*a.*a.*a…b$`, which is what a LIKE pattern with many `%` becomes, backtracks in
 * polynomial time of a degree equal to the number of `%` — thousands of them never finish. A LIKE pattern is a
 * sequence of segments between `%`; the first is anchored at the start, the last at the end, and each one between
 * is found at its leftmost occurrence after the previous one (leftmost is always safe: a later occurrence leaves
 * less room for the rest). So matching is one forward pass: time at most the text's length times the longest
 * segment, whatever the number of `%`.
 *
 * `_` stands for one code point (a character outside the Basic Multilingual Plane is two UTF-16 units), as
 * ClickHouse's LIKE on UTF-8 text.
 */

/** A segment's units: literal text, or ANY for `_`. */
const ANY = 0;
type Unit = string | typeof ANY;

interface Segment {
  readonly units: readonly Unit[];
  /** How many `_` it holds (each one is one or two UTF-16 units of the text). */
  readonly anys: number;
  /** The literal text's length in UTF-16 units. */
  readonly literalLength: number;
}

export interface LikeMatcher {
  test(text: string): boolean;
}

export interface LikeSyntax {
  /** The wildcard for any run of characters (`%` in SQL, `*` in path groupings). */
  readonly many: string;
  /** The wildcard for exactly one character, if any. */
  readonly one: string | null;
  /** The escape character, if any. */
  readonly escape: string | null;
}

export const SQL_LIKE: LikeSyntax = { many: '%', one: '_', escape: '\\' };
export const PATH_WILDCARD: LikeSyntax = { many: '*', one: null, escape: null };

function segmentsOf(pattern: string, syntax: LikeSyntax): Segment[] {
  const segments: Segment[] = [];
  let units: Unit[] = [];
  let literal = '';
  const flushLiteral = () => {
    if (literal !== '') units.push(literal);
    literal = '';
  };
  const flushSegment = () => {
    flushLiteral();
    let anys = 0;
    let literalLength = 0;
    for (const u of units) {
      if (u === ANY) anys++;
      else literalLength += u.length;
    }
    segments.push({ units, anys, literalLength });
    units = [];
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === syntax.escape && i + 1 < pattern.length) {
      literal += pattern[++i]!;
    } else if (c === syntax.many) {
      flushSegment();
    } else if (c === syntax.one) {
      flushLiteral();
      units.push(ANY);
    } else {
      literal += c;
    }
  }
  flushSegment();
  return segments;
}

/** Where `segment` ends when it starts at `at`, or -1 when it does not match there. */
function matchAt(segment: Segment, text: string, at: number): number {
  let p = at;
  for (const u of segment.units) {
    if (u === ANY) {
      if (p >= text.length) return -1;
      const code = text.charCodeAt(p);
      p += code >= 0xd800 && code <= 0xdbff && p + 1 < text.length ? 2 : 1;
    } else {
      if (!text.startsWith(u, p)) return -1;
      p += u.length;
    }
  }
  return p;
}

/** The leftmost start at or after `from` where `segment` matches, with its end; null when there is none. */
function findFrom(segment: Segment, text: string, from: number): [number, number] | null {
  const first = segment.units[0];
  if (first === undefined) return [from, from];
  let at = from;
  while (at <= text.length) {
    if (typeof first === 'string') {
      at = text.indexOf(first, at);
      if (at < 0) return null;
    }
    const end = matchAt(segment, text, at);
    if (end >= 0) return [at, end];
    at++;
  }
  return null;
}

export function compileLike(pattern: string, syntax: LikeSyntax, caseless = false): LikeMatcher {
  const fold = caseless ? (s: string) => s.toLowerCase() : (s: string) => s;
  const segments = segmentsOf(fold(pattern), syntax);
  const head = segments[0]!;
  if (segments.length === 1) {
    return {
      test(raw) {
        const text = fold(raw);
        return matchAt(head, text, 0) === text.length;
      },
    };
  }
  const tail = segments[segments.length - 1]!;
  const middle = segments.slice(1, -1);
  return {
    test(raw) {
      const text = fold(raw);
      let p = matchAt(head, text, 0);
      if (p < 0) return false;
      for (const segment of middle) {
        const found = findFrom(segment, text, p);
        if (found === null) return false;
        p = found[1];
      }
      // The last segment ends at the text's end: with `_` standing for one or two units, only a few starts can.
      const longest = tail.literalLength + 2 * tail.anys;
      for (let start = Math.max(p, text.length - longest); start <= text.length - tail.literalLength - tail.anys; start++) {
        if (matchAt(tail, text, start) === text.length) return true;
      }
      return false;
    },
  };
}
