/**
 * A small SHA-1 for the flag bucketing hash and the name-based uuids of new persons.
 *
 * `crypto.createHash('sha1')` costs 1–2 µs per call (object creation, native boundary, hex encoding), more
 * than the rest of a flag evaluation. Bucketing inputs are short (`<flag key>.<distinct id>`), so a plain-JS
 * digest over a reused buffer is several times faster. Output is checked bit for bit against node:crypto in
 * test/unit/flags-vectors.test.ts.
 *
 * The 80 rounds are unrolled with the message schedule held in 16 locals (a ring indexed by round mod 16)
 * and the five working variables renamed instead of shifted: V8 then keeps everything in registers, which
 * roughly halves the cost of a block compared with a looped version over an Int32Array schedule.
 */

const K0 = 0x5a827999;
const K1 = 0x6ed9eba1;
const K2 = 0x8f1bbcdc | 0;
const K3 = 0xca62c1d6 | 0;

/**
 * Message buffer as big-endian 32-bit words, written byte by byte: SHA-1 consumes words, so packing them while
 * encoding skips a separate byte buffer and its re-read.
 */
let words = new Int32Array(64);

// Digest state h0..h4, read by the exported entry points after `digest` returns.
const H = new Int32Array(5);

/** Stores byte `b` at byte offset `pos`; the first byte of a word overwrites whatever the last call left there. */
function put(w: Int32Array, pos: number, b: number): void {
  const shift = (3 - (pos & 3)) << 3;
  if (shift === 24) w[pos >> 2] = b << 24;
  else w[pos >> 2] |= b << shift;
}

/**
 * Writes `s` as UTF-8 at byte offset `pos` and returns the new offset. ASCII (the usual case) is packed four
 * characters per word once the offset is word-aligned; anything else goes through {@link writeUtf8Slow}.
 */
function writeUtf8(s: string, pos: number): number {
  const w = words;
  const n = s.length;
  let i = 0;
  for (; i < n && (pos & 3) !== 0; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return writeUtf8Slow(s, i, pos);
    put(w, pos++, c);
  }
  for (; i + 4 <= n; i += 4) {
    const c0 = s.charCodeAt(i);
    const c1 = s.charCodeAt(i + 1);
    const c2 = s.charCodeAt(i + 2);
    const c3 = s.charCodeAt(i + 3);
    if ((c0 | c1 | c2 | c3) >= 0x80) return writeUtf8Slow(s, i, pos);
    w[pos >> 2] = (c0 << 24) | (c1 << 16) | (c2 << 8) | c3;
    pos += 4;
  }
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return writeUtf8Slow(s, i, pos);
    put(w, pos++, c);
  }
  return pos;
}

/** Lone surrogates become U+FFFD, which is what node's Buffer/TextEncoder (and so node:crypto) do. */
function writeUtf8Slow(s: string, from: number, pos: number): number {
  const w = words;
  for (let i = from; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      put(w, pos++, c);
    } else if (c < 0x800) {
      put(w, pos++, 0xc0 | (c >> 6));
      put(w, pos++, 0x80 | (c & 63));
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        put(w, pos++, 0xf0 | (c >> 18));
        put(w, pos++, 0x80 | ((c >> 12) & 63));
        put(w, pos++, 0x80 | ((c >> 6) & 63));
        put(w, pos++, 0x80 | (c & 63));
      } else {
        put(w, pos++, 0xef);
        put(w, pos++, 0xbf);
        put(w, pos++, 0xbd);
      }
    } else {
      put(w, pos++, 0xe0 | (c >> 12));
      put(w, pos++, 0x80 | ((c >> 6) & 63));
      put(w, pos++, 0x80 | (c & 63));
    }
  }
  return pos;
}

function ensureCapacity(utf16Units: number): void {
  // 3 bytes per UTF-16 unit is the UTF-8 worst case; +72 covers the padding and the length field.
  const neededWords = ((utf16Units * 3 + 72) >> 2) + 1;
  if (neededWords > words.length) {
    let size = words.length;
    while (size < neededWords) size *= 2;
    words = new Int32Array(size);
  }
}

/** Pads the `byteLength` message bytes already in `words` and runs the compression over every block. */
function digest(byteLength: number): void {
  const w = words;
  // Padding: 0x80, zeros, then the 64-bit big-endian bit length, up to a multiple of 64 bytes (16 words).
  const totalWords = (((byteLength + 8) >> 6) + 1) << 4;
  put(w, byteLength, 0x80);
  for (let i = (byteLength >> 2) + 1; i < totalWords - 2; i++) w[i] = 0;
  w[totalWords - 2] = Math.floor(byteLength / 0x20000000);
  w[totalWords - 1] = byteLength << 3;

  H[0] = 0x67452301;
  H[1] = 0xefcdab89;
  H[2] = 0x98badcfe;
  H[3] = 0x10325476;
  H[4] = 0xc3d2e1f0;
  for (let o = 0; o < totalWords; o += 16) compressBlock(w, o, H);
}

function compressBlock(m: Int32Array, o: number, h: Int32Array): void {
  let x = 0;
    let w0 = m[o + 0];
    let w1 = m[o + 1];
    let w2 = m[o + 2];
    let w3 = m[o + 3];
    let w4 = m[o + 4];
    let w5 = m[o + 5];
    let w6 = m[o + 6];
    let w7 = m[o + 7];
    let w8 = m[o + 8];
    let w9 = m[o + 9];
    let w10 = m[o + 10];
    let w11 = m[o + 11];
    let w12 = m[o + 12];
    let w13 = m[o + 13];
    let w14 = m[o + 14];
    let w15 = m[o + 15];
    let a = h[0]!;
    let b = h[1]!;
    let c = h[2]!;
    let d = h[3]!;
    let e = h[4]!;
    // Rounds 0-19 (choose).
    e = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + K0 + w0) | 0; b = (b << 30) | (b >>> 2);
    d = (((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + d + K0 + w1) | 0; a = (a << 30) | (a >>> 2);
    c = (((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + c + K0 + w2) | 0; e = (e << 30) | (e >>> 2);
    b = (((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + b + K0 + w3) | 0; d = (d << 30) | (d >>> 2);
    a = (((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + a + K0 + w4) | 0; c = (c << 30) | (c >>> 2);
    e = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + K0 + w5) | 0; b = (b << 30) | (b >>> 2);
    d = (((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + d + K0 + w6) | 0; a = (a << 30) | (a >>> 2);
    c = (((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + c + K0 + w7) | 0; e = (e << 30) | (e >>> 2);
    b = (((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + b + K0 + w8) | 0; d = (d << 30) | (d >>> 2);
    a = (((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + a + K0 + w9) | 0; c = (c << 30) | (c >>> 2);
    e = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + K0 + w10) | 0; b = (b << 30) | (b >>> 2);
    d = (((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + d + K0 + w11) | 0; a = (a << 30) | (a >>> 2);
    c = (((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + c + K0 + w12) | 0; e = (e << 30) | (e >>> 2);
    b = (((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + b + K0 + w13) | 0; d = (d << 30) | (d >>> 2);
    a = (((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + a + K0 + w14) | 0; c = (c << 30) | (c >>> 2);
    e = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + K0 + w15) | 0; b = (b << 30) | (b >>> 2);
    x = w13 ^ w8 ^ w2 ^ w0; w0 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + ((a & b) | (~a & c)) + d + K0 + w0) | 0; a = (a << 30) | (a >>> 2);
    x = w14 ^ w9 ^ w3 ^ w1; w1 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + ((e & a) | (~e & b)) + c + K0 + w1) | 0; e = (e << 30) | (e >>> 2);
    x = w15 ^ w10 ^ w4 ^ w2; w2 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + ((d & e) | (~d & a)) + b + K0 + w2) | 0; d = (d << 30) | (d >>> 2);
    x = w0 ^ w11 ^ w5 ^ w3; w3 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + ((c & d) | (~c & e)) + a + K0 + w3) | 0; c = (c << 30) | (c >>> 2);
    // Rounds 20-39 (parity).
    x = w1 ^ w12 ^ w6 ^ w4; w4 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + K1 + w4) | 0; b = (b << 30) | (b >>> 2);
    x = w2 ^ w13 ^ w7 ^ w5; w5 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + K1 + w5) | 0; a = (a << 30) | (a >>> 2);
    x = w3 ^ w14 ^ w8 ^ w6; w6 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + K1 + w6) | 0; e = (e << 30) | (e >>> 2);
    x = w4 ^ w15 ^ w9 ^ w7; w7 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + K1 + w7) | 0; d = (d << 30) | (d >>> 2);
    x = w5 ^ w0 ^ w10 ^ w8; w8 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + K1 + w8) | 0; c = (c << 30) | (c >>> 2);
    x = w6 ^ w1 ^ w11 ^ w9; w9 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + K1 + w9) | 0; b = (b << 30) | (b >>> 2);
    x = w7 ^ w2 ^ w12 ^ w10; w10 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + K1 + w10) | 0; a = (a << 30) | (a >>> 2);
    x = w8 ^ w3 ^ w13 ^ w11; w11 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + K1 + w11) | 0; e = (e << 30) | (e >>> 2);
    x = w9 ^ w4 ^ w14 ^ w12; w12 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + K1 + w12) | 0; d = (d << 30) | (d >>> 2);
    x = w10 ^ w5 ^ w15 ^ w13; w13 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + K1 + w13) | 0; c = (c << 30) | (c >>> 2);
    x = w11 ^ w6 ^ w0 ^ w14; w14 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + K1 + w14) | 0; b = (b << 30) | (b >>> 2);
    x = w12 ^ w7 ^ w1 ^ w15; w15 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + K1 + w15) | 0; a = (a << 30) | (a >>> 2);
    x = w13 ^ w8 ^ w2 ^ w0; w0 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + K1 + w0) | 0; e = (e << 30) | (e >>> 2);
    x = w14 ^ w9 ^ w3 ^ w1; w1 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + K1 + w1) | 0; d = (d << 30) | (d >>> 2);
    x = w15 ^ w10 ^ w4 ^ w2; w2 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + K1 + w2) | 0; c = (c << 30) | (c >>> 2);
    x = w0 ^ w11 ^ w5 ^ w3; w3 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + K1 + w3) | 0; b = (b << 30) | (b >>> 2);
    x = w1 ^ w12 ^ w6 ^ w4; w4 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + K1 + w4) | 0; a = (a << 30) | (a >>> 2);
    x = w2 ^ w13 ^ w7 ^ w5; w5 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + K1 + w5) | 0; e = (e << 30) | (e >>> 2);
    x = w3 ^ w14 ^ w8 ^ w6; w6 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + K1 + w6) | 0; d = (d << 30) | (d >>> 2);
    x = w4 ^ w15 ^ w9 ^ w7; w7 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + K1 + w7) | 0; c = (c << 30) | (c >>> 2);
    // Rounds 40-59 (majority).
    x = w5 ^ w0 ^ w10 ^ w8; w8 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + K2 + w8) | 0; b = (b << 30) | (b >>> 2);
    x = w6 ^ w1 ^ w11 ^ w9; w9 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + ((a & b) | (a & c) | (b & c)) + d + K2 + w9) | 0; a = (a << 30) | (a >>> 2);
    x = w7 ^ w2 ^ w12 ^ w10; w10 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + ((e & a) | (e & b) | (a & b)) + c + K2 + w10) | 0; e = (e << 30) | (e >>> 2);
    x = w8 ^ w3 ^ w13 ^ w11; w11 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + ((d & e) | (d & a) | (e & a)) + b + K2 + w11) | 0; d = (d << 30) | (d >>> 2);
    x = w9 ^ w4 ^ w14 ^ w12; w12 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + ((c & d) | (c & e) | (d & e)) + a + K2 + w12) | 0; c = (c << 30) | (c >>> 2);
    x = w10 ^ w5 ^ w15 ^ w13; w13 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + K2 + w13) | 0; b = (b << 30) | (b >>> 2);
    x = w11 ^ w6 ^ w0 ^ w14; w14 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + ((a & b) | (a & c) | (b & c)) + d + K2 + w14) | 0; a = (a << 30) | (a >>> 2);
    x = w12 ^ w7 ^ w1 ^ w15; w15 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + ((e & a) | (e & b) | (a & b)) + c + K2 + w15) | 0; e = (e << 30) | (e >>> 2);
    x = w13 ^ w8 ^ w2 ^ w0; w0 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + ((d & e) | (d & a) | (e & a)) + b + K2 + w0) | 0; d = (d << 30) | (d >>> 2);
    x = w14 ^ w9 ^ w3 ^ w1; w1 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + ((c & d) | (c & e) | (d & e)) + a + K2 + w1) | 0; c = (c << 30) | (c >>> 2);
    x = w15 ^ w10 ^ w4 ^ w2; w2 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + K2 + w2) | 0; b = (b << 30) | (b >>> 2);
    x = w0 ^ w11 ^ w5 ^ w3; w3 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + ((a & b) | (a & c) | (b & c)) + d + K2 + w3) | 0; a = (a << 30) | (a >>> 2);
    x = w1 ^ w12 ^ w6 ^ w4; w4 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + ((e & a) | (e & b) | (a & b)) + c + K2 + w4) | 0; e = (e << 30) | (e >>> 2);
    x = w2 ^ w13 ^ w7 ^ w5; w5 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + ((d & e) | (d & a) | (e & a)) + b + K2 + w5) | 0; d = (d << 30) | (d >>> 2);
    x = w3 ^ w14 ^ w8 ^ w6; w6 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + ((c & d) | (c & e) | (d & e)) + a + K2 + w6) | 0; c = (c << 30) | (c >>> 2);
    x = w4 ^ w15 ^ w9 ^ w7; w7 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + K2 + w7) | 0; b = (b << 30) | (b >>> 2);
    x = w5 ^ w0 ^ w10 ^ w8; w8 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + ((a & b) | (a & c) | (b & c)) + d + K2 + w8) | 0; a = (a << 30) | (a >>> 2);
    x = w6 ^ w1 ^ w11 ^ w9; w9 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + ((e & a) | (e & b) | (a & b)) + c + K2 + w9) | 0; e = (e << 30) | (e >>> 2);
    x = w7 ^ w2 ^ w12 ^ w10; w10 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + ((d & e) | (d & a) | (e & a)) + b + K2 + w10) | 0; d = (d << 30) | (d >>> 2);
    x = w8 ^ w3 ^ w13 ^ w11; w11 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + ((c & d) | (c & e) | (d & e)) + a + K2 + w11) | 0; c = (c << 30) | (c >>> 2);
    // Rounds 60-79 (parity).
    x = w9 ^ w4 ^ w14 ^ w12; w12 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + K3 + w12) | 0; b = (b << 30) | (b >>> 2);
    x = w10 ^ w5 ^ w15 ^ w13; w13 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + K3 + w13) | 0; a = (a << 30) | (a >>> 2);
    x = w11 ^ w6 ^ w0 ^ w14; w14 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + K3 + w14) | 0; e = (e << 30) | (e >>> 2);
    x = w12 ^ w7 ^ w1 ^ w15; w15 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + K3 + w15) | 0; d = (d << 30) | (d >>> 2);
    x = w13 ^ w8 ^ w2 ^ w0; w0 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + K3 + w0) | 0; c = (c << 30) | (c >>> 2);
    x = w14 ^ w9 ^ w3 ^ w1; w1 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + K3 + w1) | 0; b = (b << 30) | (b >>> 2);
    x = w15 ^ w10 ^ w4 ^ w2; w2 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + K3 + w2) | 0; a = (a << 30) | (a >>> 2);
    x = w0 ^ w11 ^ w5 ^ w3; w3 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + K3 + w3) | 0; e = (e << 30) | (e >>> 2);
    x = w1 ^ w12 ^ w6 ^ w4; w4 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + K3 + w4) | 0; d = (d << 30) | (d >>> 2);
    x = w2 ^ w13 ^ w7 ^ w5; w5 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + K3 + w5) | 0; c = (c << 30) | (c >>> 2);
    x = w3 ^ w14 ^ w8 ^ w6; w6 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + K3 + w6) | 0; b = (b << 30) | (b >>> 2);
    x = w4 ^ w15 ^ w9 ^ w7; w7 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + K3 + w7) | 0; a = (a << 30) | (a >>> 2);
    x = w5 ^ w0 ^ w10 ^ w8; w8 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + K3 + w8) | 0; e = (e << 30) | (e >>> 2);
    x = w6 ^ w1 ^ w11 ^ w9; w9 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + K3 + w9) | 0; d = (d << 30) | (d >>> 2);
    x = w7 ^ w2 ^ w12 ^ w10; w10 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + K3 + w10) | 0; c = (c << 30) | (c >>> 2);
    x = w8 ^ w3 ^ w13 ^ w11; w11 = (x << 1) | (x >>> 31);
    e = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + K3 + w11) | 0; b = (b << 30) | (b >>> 2);
    x = w9 ^ w4 ^ w14 ^ w12; w12 = (x << 1) | (x >>> 31);
    d = (((e << 5) | (e >>> 27)) + (a ^ b ^ c) + d + K3 + w12) | 0; a = (a << 30) | (a >>> 2);
    x = w10 ^ w5 ^ w15 ^ w13; w13 = (x << 1) | (x >>> 31);
    c = (((d << 5) | (d >>> 27)) + (e ^ a ^ b) + c + K3 + w13) | 0; e = (e << 30) | (e >>> 2);
    x = w11 ^ w6 ^ w0 ^ w14; w14 = (x << 1) | (x >>> 31);
    b = (((c << 5) | (c >>> 27)) + (d ^ e ^ a) + b + K3 + w14) | 0; d = (d << 30) | (d >>> 2);
    x = w12 ^ w7 ^ w1 ^ w15; w15 = (x << 1) | (x >>> 31);
    a = (((b << 5) | (b >>> 27)) + (c ^ d ^ e) + a + K3 + w15) | 0; c = (c << 30) | (c >>> 2);
    h[0] = h[0]! + a;
    h[1] = h[1]! + b;
    h[2] = h[2]! + c;
    h[3] = h[3]! + d;
    h[4] = h[4]! + e;
}

function digestConcat(a: string, b: string, c: string): void {
  ensureCapacity(a.length + b.length + c.length);
  let pos = writeUtf8(a, 0);
  pos = writeUtf8(b, pos);
  pos = writeUtf8(c, pos);
  digest(pos);
}

function hex8(x: number): string {
  return (x >>> 0).toString(16).padStart(8, '0');
}

/**
 * SHA-1 of `prefix` followed by the UTF-8 bytes of `text`, written to `out` (20 bytes). Name-based (v5) uuids
 * of new persons: node:crypto's createHash cost 4-6 µs per uuid there, several times this.
 */
export function sha1Into(prefix: Uint8Array, text: string, out: Uint8Array): void {
  ensureCapacity(prefix.length + text.length);
  const w = words;
  let pos = 0;
  for (let i = 0; i < prefix.length; i++) put(w, pos++, prefix[i]!);
  pos = writeUtf8(text, pos);
  digest(pos);
  for (let i = 0; i < 5; i++) {
    const h = H[i]!;
    out[i * 4] = h >>> 24;
    out[i * 4 + 1] = (h >>> 16) & 0xff;
    out[i * 4 + 2] = (h >>> 8) & 0xff;
    out[i * 4 + 3] = h & 0xff;
  }
}

/** Lowercase hex SHA-1 of the UTF-8 bytes of `s` (tests and tools; the hot path uses {@link sha1Prefix60}). */
export function sha1Hex(s: string): string {
  digestConcat(s, '', '');
  return hex8(H[0]!) + hex8(H[1]!) + hex8(H[2]!) + hex8(H[3]!) + hex8(H[4]!);
}

/** Words needed for `length` bytes starting `shift` bytes into the first word (one spare for OR-ing behind). */
function wordCount(length: number, shift: number): number {
  return ((length + shift + 3) >> 2) + 1;
}

/**
 * The first `length` UTF-8 bytes of `bytes` as big-endian words in `out`, starting `shift` bytes into the first
 * word (the bytes before it are zero), so they can be OR-ed into a message at any alignment.
 */
function packWords(bytes: Uint8Array, length: number, shift: number, out: Int32Array): void {
  out.fill(0, 0, wordCount(length, shift));
  for (let i = 0; i < length; i++) {
    const pos = i + shift;
    out[pos >> 2] |= bytes[i]! << ((3 - (pos & 3)) << 3);
  }
}

const encoder = new TextEncoder();

/** A hash prefix (`<flag key>.`): its words at offset 0 and its byte length. Prefixes repeat on every request. */
interface EncodedPrefix {
  words: Int32Array;
  bytes: number;
}
const prefixes = new Map<string, EncodedPrefix>();
const MAX_PREFIXES = 10_000;

function encodedPrefix(prefix: string): EncodedPrefix {
  let p = prefixes.get(prefix);
  if (p === undefined) {
    if (prefixes.size >= MAX_PREFIXES) prefixes.clear();
    const bytes = encoder.encode(prefix);
    const words = new Int32Array(wordCount(bytes.length, 0));
    packWords(bytes, bytes.length, 0, words);
    p = { words, bytes: bytes.length };
    prefixes.set(prefix, p);
  }
  return p;
}

/**
 * The identifier of the current request (a distinct id, group key or device id) is hashed once per flag with a
 * different prefix each time; its bytes are encoded once and kept pre-shifted for the four possible alignments
 * behind a prefix. Every request brings a new identifier, so the encoding reuses its buffers instead of
 * allocating (TextEncoder.encode plus four Int32Arrays were half the engine's time for a request with 5 flags).
 */
let lastIdentifier: string | null = null;
let identifierBytes = new Uint8Array(256);
let identifierLength = 0;
const identifierWords: Int32Array[] = [new Int32Array(66), new Int32Array(66), new Int32Array(66), new Int32Array(66)];
/** Words in use per alignment; 0 while that alignment has not been built for the current identifier. */
const identifierWordCounts = [0, 0, 0, 0];

function encodeIdentifier(identifier: string): void {
  const n = identifier.length;
  if (identifierBytes.length < n * 3) identifierBytes = new Uint8Array(n * 3);
  let i = 0;
  for (; i < n; i++) {
    const c = identifier.charCodeAt(i);
    if (c >= 0x80) break;
    identifierBytes[i] = c;
  }
  identifierLength = i === n ? n : encoder.encodeInto(identifier, identifierBytes).written;
}

function identifierAt(identifier: string, shift: number): Int32Array {
  if (identifier !== lastIdentifier) {
    lastIdentifier = identifier;
    encodeIdentifier(identifier);
    identifierWordCounts.fill(0);
  }
  let w = identifierWords[shift]!;
  if (identifierWordCounts[shift] === 0) {
    const count = wordCount(identifierLength, shift);
    if (w.length < count) identifierWords[shift] = w = new Int32Array(count * 2);
    packWords(identifierBytes, identifierLength, shift, w);
    identifierWordCounts[shift] = count;
  }
  return w;
}

/**
 * The first 60 bits (15 hex digits) of SHA-1(prefix + identifier + salt) as a double, i.e. PostHog's
 * `int(sha1_hex[0:15], 16)`. The concatenation is never materialised: the prefix's and the identifier's encodings
 * are cached (the same prefixes come back on every request, the same identifier for every flag of a request),
 * so a hash costs a few word copies and one compression. Measured with `node dist/bench/flag-eval.bench.js`.
 *
 * `h0 * 2^28` is exact; adding the 28-bit tail rounds once, to nearest-even, exactly like Rust's `u64 as f64`
 * and JS `parseInt(hex15, 16)`, so the value matches PostHog bit for bit.
 */
export function sha1Prefix60(prefix: string, identifier: string, salt: string): number {
  const p = encodedPrefix(prefix);
  const shift = p.bytes & 3;
  const id = identifierAt(identifier, shift);
  ensureCapacity(p.bytes + identifierLength + salt.length * 3);
  const w = words;
  const pw = p.words;
  const base = p.bytes >> 2;
  for (let i = 0; i <= base; i++) w[i] = pw[i]!;
  w[base] |= id[0]!;
  const idWords = identifierWordCounts[shift]!;
  for (let j = 1; j < idWords; j++) w[base + j] = id[j]!;
  let pos = p.bytes + identifierLength;
  if (salt.length > 0) pos = writeUtf8(salt, pos);
  digest(pos);
  return (H[0]! >>> 0) * 268435456 + (H[1]! >>> 4);
}
