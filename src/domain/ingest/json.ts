/**
 * JSON parsing for capture bodies. Python SDKs serialise float('nan') / float('inf') as the bare tokens NaN,
 * Infinity and -Infinity, which JSON.parse rejects; Django read them as null (`parse_constant`), Rust capture too.
 * The rewrite only runs after a failed parse, so well-formed bodies pay nothing.
 */

/** `text` is what parsed: the input, or its rewrite with non-finite tokens replaced (plain JSON either way). */
export type JsonParseResult = { ok: true; value: unknown; text: string } | { ok: false; reason: string };

export function parseJson(text: string): JsonParseResult {
  try {
    return { ok: true, value: JSON.parse(text), text };
  } catch (err) {
    if (text.includes('NaN') || text.includes('Infinity')) {
      const rewritten = replaceNonFiniteTokens(text);
      if (rewritten !== text) {
        try {
          return { ok: true, value: JSON.parse(rewritten), text: rewritten };
        } catch {
          // fall through to the original error message
        }
      }
    }
    return { ok: false, reason: (err as Error).message };
  }
}

/** Replace bare NaN / Infinity / -Infinity tokens outside string literals with null. */
export function replaceNonFiniteTokens(text: string): string {
  let out = '';
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    let len = 0;
    if (c === 0x4e && text.startsWith('NaN', i)) len = 3;
    else if (c === 0x49 && text.startsWith('Infinity', i)) len = 8;
    else if (c === 0x2d && text.startsWith('-Infinity', i)) len = 9;
    if (len > 0) {
      out += text.slice(last, i) + 'null';
      i += len - 1;
      last = i + 1;
    }
  }
  return last === 0 ? text : out + text.slice(last);
}
