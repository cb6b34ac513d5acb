import { Buffer } from 'node:buffer';

/**
 * Base64 helpers for legacy capture bodies (§1.2). Clients send standard base64; form transports may have turned
 * '+' into ' ', some libraries drop the '=' padding, a few use the URL-safe alphabet.
 */

/** 1 = base64 alphabet (both standard and URL-safe), 2 = '=' padding, 3 = whitespace (space repaired to '+'). */
const CLASS = new Uint8Array(128);
for (let c = 0x41; c <= 0x5a; c++) CLASS[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) CLASS[c] = 1;
for (let c = 0x30; c <= 0x39; c++) CLASS[c] = 1;
CLASS[0x2b] = 1; // +
CLASS[0x2f] = 1; // /
CLASS[0x2d] = 1; // - (URL-safe)
CLASS[0x5f] = 1; // _ (URL-safe)
CLASS[0x3d] = 2; // =
CLASS[0x20] = 3; // space: a '+' mangled by form decoding
CLASS[0x0a] = 3; // line breaks from MIME-style encoders
CLASS[0x0d] = 3;

/**
 * True when `text` (already trimmed by the caller or not) consists only of base64 characters, with '=' only as
 * trailing padding (at most two) and a length that can encode whole bytes. Spaces count as mangled '+'.
 */
export function looksLikeBase64(text: string): boolean {
  let data = 0;
  let pad = 0;
  const n = text.length;
  let start = 0;
  let end = n;
  // Leading/trailing line breaks and spaces are transport noise, not data.
  while (start < end && (text.charCodeAt(start) === 0x0a || text.charCodeAt(start) === 0x0d)) start++;
  while (end > start && (text.charCodeAt(end - 1) === 0x0a || text.charCodeAt(end - 1) === 0x0d || text.charCodeAt(end - 1) === 0x20)) end--;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    const k = c < 128 ? CLASS[c]! : 0;
    if (k === 0) return false;
    if (k === 2) {
      pad++;
      if (pad > 2) return false;
      continue;
    }
    if (pad > 0) return false; // data after padding
    if (k === 1 || c === 0x20) data++;
  }
  if (data === 0) return false;
  // A single leftover character (length % 4 == 1) cannot encode a byte.
  return data % 4 !== 1;
}

/** Decode base64 text (standard or URL-safe; spaces are read as '+'; padding optional). Call looksLikeBase64 first. */
export function decodeBase64Text(text: string): Buffer {
  const repaired = text.indexOf(' ') === -1 ? text : text.replaceAll(' ', '+');
  // Buffer's decoder accepts both alphabets, missing padding and skips line breaks.
  return Buffer.from(repaired, 'base64');
}
