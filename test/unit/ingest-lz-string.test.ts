import t from 'tap';
import { decompressLz64 } from '../../src/domain/ingest/index.js';

// Fixtures produced once with lz-string 1.5's compressToBase64 (the encoder legacy posthog-js bundled); the
// library itself is not a dependency.

/** Deterministic 5002-character batch body; its compressed form below needs code widths above 8 bits. */
function longBatch(): string {
  const batch = [];
  for (let i = 0; i < 60; i++) {
    batch.push({ event: 'e' + (i % 37), distinct_id: 'id-' + ((i * 7919) % 1000), properties: { n: i, s: 'x'.repeat(i % 13), u: 'ü' + i } });
  }
  return JSON.stringify({ api_key: 'phc_lz', batch });
}

const LONG_B64 =
  'N4IghgDglg+g1gUwJ4gFwggCwMYwDYBeIANCAEZgAu2maA2qAgG4IB2laICADCSACZQAzpSitslGFH6dpAWl6kIAJwD2EBMtEIhaUKzTdSu9HwCunAD+8AvjeKMW7TggCMfQSLESpM9PIBOVwC+FXVNbRN9NFdjTgAPcyt3OwcuJw50BAAmD2FRcUlpWX45AA4AZjLQtQ0tKB09EANUbLj0eMTSC3RLXNTHNkyuCryvQt8SuQB2AFZpmvD6xtRo1Ar2kE6ukB6QS1GB9KGXABYxgp9i/1KANmnbxbrIppbTze2dvctzo+YTrKzC7eIp+EDyWYBIFKWoRBpRZpoWYfT5JXpAv4ZFyPUieS6gqazVznGFLF6rRGoW4o1HdKyPTEArgLXH5EGTG5yU4VUak57w15oaY02m7KwLRnOLLVVnjK5g+QVWa5PlwlZrMoi0XfaqS4YIEKy/Ec8GlbLTdyq5YIloBLXaqwhPUuVyKARsibXU1yYJusL89WU132h29V0gZ1ZVyW91ygmc12GjCw62C1DRkOh/bRiP2QZSriuFWx41e+TZGXJskCiktIuZrOWIu5tL/AtuXkl9ll0oBU4sqsBm0xDYgEwgNHZw5547t4nAz0K0plW44wdq4fp95jhKTpu/Gdt/WuaFdxdTaZlU/+jdpk8ovcnlv549rvHdpczbgk9ep2sxakdw6TpHwZQ8sSjAd33PTlbmyTsbz/NZXGFICtm2R8JXApk3EraD5UJU5i0Q8lkM1NDPi+ZJdWwuck3w+NvVOW4YxImtkLtCjKMfJ1aP1bI3QYk1FTKP0U1IykBJDPcBOfWd+JjISezkbIAiTNjAxabJYi4yiqN6bS5KPFxsmLJTP20ysNM3UyGxk/o+JMztzKmVwKgHay03ght9P2eCjIgrhsh/FzOVmNdPP/Vpt3HPTuLpAyD1bQKclPULvQCOYnlvKLsmRXS4pAhK/IxRysmyN8PQIzkyj7bKkMkwDxxksDkpw80F2q70yjc+qJK01DYpkrC2vbCtOsY+RpgqYjxPYyTyNi3y+ho0b+PoqrJruIk+vmrTOKW5bVICnCKkEzbhNKeYxOrTS0DOkU9zOk72wqRSLuU05at2u71h0w6irFXo3pe/UZomy6uW4Ky5t+mb7Sehy1pcHkIeUmaPNhzceWk4qDmnZGsgqEKPos5ifuxmKEjip6kpfFG0tJ1zbmvLG0yVOy8aVUGUcquNIbKH9IrWComupwqnta+msnO/n0Yp9nBvFiWuZG6XCzRz8AlMhWoqqHzAe+KoefKzWpkF1i2b1g7OCe3jCZGM3OQeG6hzTU4jAovcPZNrgSblz97nUq21lOf7qe9lIyq4RmA8JAIYduzciJpb2kfVhA+dLT8iUxpP3dHAHvYJjOoKZzluQikPKVOKngIwvHa99hA8PL70lVZ/OotOfKAcNqwe+bja485c0hert4xfrxtycjQtZez1yAgQie0H7TNvbV+SXXekfvWjWau9DxblfioH9i+5vmyND8phBq1+rXm3p70737Yz3qb5gjLZldnK1l/gbPcv8r7+0XjVW4wcj6UiJAbZaO055uFjuA70l5E5uyisqTYwD07byjFnW+ztuB5wwQAwuu48azBLngwsZc97yDglXaBLRZh13QsAumNDcJO29KwzupCYG93FsA0qDs3DDxQfIZi49mFIinuhfu6IpZcNkl/LqIkV6yNQPMLUwCt7GXKrvSRpQzqHwESwk+L94GrQzjrNRW0VKGQfntJEz8FGNkhLmAAujYIAA';

const fixtures: { name: string; plain: string; b64: string }[] = [
  { name: 'single char', plain: 'a', b64: 'IZA=' },
  { name: 'two chars', plain: 'ab', b64: 'IYIyA===' },
  { name: 'repetition (cScSc case)', plain: 'a'.repeat(40), b64: 'IY18ZVkA' },
  { name: 'phrase', plain: 'hello world hello world hello world', b64: 'BYUwNmD2AEDukCcwBNqgjeTXqnRKQA==' },
  {
    name: 'capture event',
    plain: '{"event":"$pageview","distinct_id":"user-1","properties":{"token":"phc_abc","$current_url":"https://example.com/?q=1"}}',
    b64: 'N4IgpgbmB2AuIC4QBIAOBDA5pAlmA7iADQgAmOAzrDtAMawD6OpiIArhWAE4C0AjMRCouAe1TdqYColCwRAaxitUAC1oN0AI1qDktNly4xGBgDasVsWKgoIA9HbAAPdAFtUpsADpaI13YB+AEcAXgEAX3CgA',
  },
  {
    name: 'non-BMP and 16-bit characters',
    plain: '[{"event":"é ü ✓ 😀 中文","distinct_id":"ü","properties":{"x":"\\u0000\uffff"}}]',
    b64: 'NobwRApgbhB2AuYBcYCXACAP+wyOTsLwbgAHvqC0coOGmYANGACYCWAzvHbAMbwD6dNyYmVYAA4AnAPaCIw5hAbJwAD14AdAK4AGDWsD//2AC+ugLpA=',
  },
  { name: 'empty string', plain: '', b64: 'Q===' },
  { name: 'batch of 60 events', plain: longBatch(), b64: LONG_B64 },
];

t.test('decompresses real lz-string compressToBase64 output', async (t) => {
  for (const f of fixtures) t.equal(decompressLz64(f.b64), f.plain, f.name);
});

t.test("spaces are read as '+' (form transport damage)", async (t) => {
  for (const f of fixtures) {
    if (!f.b64.includes('+')) continue;
    t.equal(decompressLz64(f.b64.replaceAll('+', ' ')), f.plain, f.name);
  }
});

t.test('malformed input gives null', async (t) => {
  const cases: [string, string][] = [
    ['empty input', ''],
    ['character outside the alphabet', 'N4Ig*bmB'],
    ['truncated stream', fixtures[4]!.b64.slice(0, 40)],
    ['truncated long stream', LONG_B64.slice(0, LONG_B64.length - 10)],
  ];
  for (const [name, input] of cases) t.equal(decompressLz64(input), null, name);
});

t.test('maxChars bounds the output (LZ bombs)', async (t) => {
  const long = longBatch();
  t.equal(decompressLz64(LONG_B64, long.length), long, 'exact limit passes');
  t.equal(decompressLz64(LONG_B64, long.length - 1), null, 'one below fails');
});
