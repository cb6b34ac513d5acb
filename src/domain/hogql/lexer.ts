/**
 * Tokens of a HogQL query: identifiers (bare, `backquoted` or "double-quoted"), numbers, 'strings' (with `''` and
 * backslash escapes, as ClickHouse reads them), operators and `{placeholders}`. Comments (`-- …`, `/* … *\/`) are
 * skipped. Errors name the position.
 */
import { hogqlError } from './errors.js';

export type TokenKind = 'ident' | 'quoted' | 'number' | 'string' | 'op' | 'placeholder' | 'end';

export interface Token {
  kind: TokenKind;
  text: string;
  /** Offset in the query text. */
  at: number;
}

const OPERATORS = ['<=>', '!=', '<>', '<=', '>=', '==', '||', '=~', '!~', '->', '::', '(', ')', ',', '.', '+', '-', '*', '/', '%', '=', '<', '>', '[', ']', '?', ':', ';', '{', '}'];
const IDENT_START = /[A-Za-z_$]/;
const IDENT_PART = /[A-Za-z0-9_$]/;

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f', '\\': '\\', "'": "'", '"': '"', '`': '`' };

/**
 * Longest query text taken, in characters: ClickHouse's `max_query_size` default (262,144 bytes). Lexing and parsing
 * are linear, but a 2.4 MB query (an IN list of 200,000 items) held a worker ~0.2 s before any slice could yield, and
 * a request body of up to QUILL_MAX_BODY_MB became tens of millions of token objects. It also bounds the tokens
 * (fewer than 262,144).
 */
export const MAX_QUERY_LENGTH = 262_144;

export function tokenize(text: string): Token[] {
  if (text.length > MAX_QUERY_LENGTH) {
    hogqlError(`The query is longer than ${MAX_QUERY_LENGTH.toLocaleString('en-US')} characters (ClickHouse's max_query_size); put long value lists in a cohort or a subquery.`);
  }
  const out: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '-' && text[i + 1] === '-') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) hogqlError(`Unterminated comment at position ${i}.`);
      i = end + 2;
      continue;
    }
    const at = i;
    if (IDENT_START.test(c)) {
      while (i < n && IDENT_PART.test(text[i]!)) i++;
      out.push({ kind: 'ident', text: text.slice(at, i), at });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      if (c === '0' && (text[i + 1] === 'x' || text[i + 1] === 'X')) {
        i += 2;
        while (i < n && /[0-9a-fA-F]/.test(text[i]!)) i++;
      } else {
        while (i < n && /[0-9]/.test(text[i]!)) i++;
        // A fraction, unless the dot starts a name (`t.1` is no number, but `1.5` and `1.` are).
        if (text[i] === '.' && !IDENT_START.test(text[i + 1] ?? '')) {
          i++;
          while (i < n && /[0-9]/.test(text[i]!)) i++;
        }
        if ((text[i] === 'e' || text[i] === 'E') && /[0-9+-]/.test(text[i + 1] ?? '')) {
          i += 2;
          while (i < n && /[0-9]/.test(text[i]!)) i++;
        }
      }
      if (i < n && IDENT_START.test(text[i]!)) hogqlError(`Invalid number "${text.slice(at, i + 1)}" at position ${at}.`);
      out.push({ kind: 'number', text: text.slice(at, i), at });
      continue;
    }
    if (c === "'" || c === '`' || c === '"') {
      const value = quoted(text, i, c);
      i = value.end;
      out.push({ kind: c === "'" ? 'string' : 'quoted', text: value.text, at });
      continue;
    }
    if (c === '{') {
      const end = text.indexOf('}', i);
      if (end < 0) hogqlError(`Unterminated placeholder at position ${i}.`);
      out.push({ kind: 'placeholder', text: text.slice(i + 1, end).trim(), at });
      i = end + 1;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (!op) hogqlError(`Unexpected character "${c}" at position ${i}.`);
    out.push({ kind: 'op', text: op, at });
    i += op.length;
  }
  out.push({ kind: 'end', text: '', at: n });
  return out;
}

/** A quoted string or identifier starting at `start`: the quote doubled or a backslash escape stand for it. */
function quoted(text: string, start: number, quote: string): { text: string; end: number } {
  let i = start + 1;
  let out = '';
  for (;;) {
    if (i >= text.length) hogqlError(`Unterminated ${quote === "'" ? 'string' : 'identifier'} at position ${start}.`);
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) hogqlError(`Unterminated string at position ${start}.`);
      out += ESCAPES[next] ?? `\\${next}`;
      i += 2;
      continue;
    }
    if (c === quote) {
      if (text[i + 1] === quote) {
        out += quote;
        i += 2;
        continue;
      }
      return { text: out, end: i + 1 };
    }
    out += c;
    i++;
  }
}
