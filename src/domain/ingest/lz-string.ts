/**
 * LZ-String `decompressFromBase64`, written from the algorithm (legacy posthog-js ≤ ~1.100 sent `compression=lz64`
 * form bodies produced by `compressToBase64`). Only decompression is needed by a server.
 *
 * Format facts the code relies on:
 * - The text uses the alphabet `A–Z a–z 0–9 + /` (values 0..63) plus `=` as padding; each character carries 6
 *   bits, most significant first.
 * - Inside that bit stream an integer of n bits is stored least-significant bit first.
 * - Dictionary codes 0, 1 and 2 are reserved: 0 = "next 8 bits are a new character", 1 = "next 16 bits are a new
 *   character", 2 = end of stream. Real entries start at 3. The code width starts at 2 bits for the first token
 *   and 3 bits afterwards, and grows by one whenever the dictionary reaches the next power of two
 *   (tracked by the `enlargeIn` countdown, exactly as the compressor does).
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';

/** char code → 6-bit value, -1 for characters outside the alphabet. */
const VALUE_OF = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE_OF[ALPHABET.charCodeAt(i)] = i === 64 ? 0 : i;
// Browsers turn '+' into ' ' when a form value was not percent-encoded; repair it here (§1.2 lz64).
VALUE_OF[0x20] = 62;

/** Reads the 6-bit-per-character stream. `fail` is set when a read runs past the end or hits a bad character. */
class BitReader {
  private index = 0;
  private value = 0;
  private mask = 0; // 0 = need the next character
  fail = false;

  constructor(private readonly text: string) {}

  read(bits: number): number {
    let result = 0;
    for (let power = 1, i = 0; i < bits; i++, power <<= 1) {
      if (this.mask === 0) {
        if (this.index >= this.text.length) {
          this.fail = true;
          return 0;
        }
        const code = this.text.charCodeAt(this.index++);
        const v = code < 128 ? VALUE_OF[code]! : -1;
        if (v < 0) {
          this.fail = true;
          return 0;
        }
        this.value = v;
        this.mask = 32;
      }
      if (this.value & this.mask) result |= power;
      this.mask >>= 1;
    }
    return result;
  }
}

/**
 * Decompress the output of lz-string's `compressToBase64`.
 * Returns null for empty, truncated or otherwise malformed input, or when the output would exceed `maxChars`
 * UTF-16 units (LZ output can grow quadratically with the input, so callers bound it like a gzip bomb).
 * Spaces are read as '+'.
 */
export function decompressLz64(input: string, maxChars: number = Number.MAX_SAFE_INTEGER): string | null {
  const r = lz64Decode(input, maxChars);
  return typeof r === 'string' ? r : null;
}

export type Lz64Error = { error: 'invalid' | 'too_large' };
const INVALID: Lz64Error = { error: 'invalid' };
const TOO_LARGE: Lz64Error = { error: 'too_large' };

/** Like {@link decompressLz64} but tells a malformed input apart from an over-long output. */
export function lz64Decode(input: string, maxChars: number): string | Lz64Error {
  if (typeof input !== 'string' || input.length === 0) return INVALID;
  const reader = new BitReader(input);

  const first = reader.read(2);
  let w: string;
  if (first === 0) w = String.fromCharCode(reader.read(8));
  else if (first === 1) w = String.fromCharCode(reader.read(16));
  else if (first === 2) return reader.fail ? INVALID : '';
  else return INVALID;
  if (reader.fail) return INVALID;

  // Slots 0..2 are the reserved codes; they are never looked up because those codes are handled first.
  const dictionary: string[] = ['', '', '', w];
  let enlargeIn = 4;
  let numBits = 3;
  const parts: string[] = [w];
  let total = w.length;

  for (;;) {
    let code = reader.read(numBits);
    if (reader.fail) return INVALID;

    if (code === 0 || code === 1) {
      const ch = String.fromCharCode(reader.read(code === 0 ? 8 : 16));
      if (reader.fail) return INVALID;
      code = dictionary.length;
      dictionary.push(ch);
      if (--enlargeIn === 0) {
        enlargeIn = 1 << numBits;
        numBits++;
      }
    } else if (code === 2) {
      return parts.join('');
    }

    let entry: string;
    if (code < dictionary.length) entry = dictionary[code]!;
    else if (code === dictionary.length) entry = w + w.charAt(0); // the "cScSc" case: code defined by this step
    else return INVALID;

    total += entry.length;
    if (total > maxChars) return TOO_LARGE;
    parts.push(entry);

    dictionary.push(w + entry.charAt(0));
    if (--enlargeIn === 0) {
      enlargeIn = 1 << numBits;
      numBits++;
    }
    w = entry;
  }
}
