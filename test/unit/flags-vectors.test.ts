/**
 * Bucketing hash compatibility: PostHog's published cross-SDK vectors (flag-vectors.json), the holdout golden
 * values, and the hand-written SHA-1 against node:crypto.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { bucketHash, compileFlagSet, evaluateFlags, sha1Hex, type FlagRecord } from '../../src/domain/flags/index.js';
import { sha1Prefix60 } from '../../src/domain/sha1.js';

interface Vectors {
  simple_flag: { flag_definition: { key: string; filters: Record<string, unknown> }; enabled_count: number; results: boolean[] };
  multivariate_flag: {
    flag_definition: { key: string; filters: Record<string, unknown> };
    value_counts: Record<string, number>;
    results: (string | false)[];
  };
  holdout_hash_golden: { vectors: { identifier: string; hashed_string: string; expected_hash: number }[] };
  computed_samples_not_published: {
    rows: {
      distinct_id: string;
      simple_flag_rollout_hash: number;
      simple_flag_expected: boolean;
      multivariate_rollout_hash: number;
      multivariate_variant_hash: number;
      multivariate_expected: string | false;
    }[];
  };
}

const vectors = JSON.parse(readFileSync(new URL('../vectors/flag-vectors.json', import.meta.url), 'utf8')) as Vectors;

function record(id: number, def: { key: string; filters: Record<string, unknown> }): FlagRecord {
  return { id, key: def.key, name: def.key, active: true, deleted: false, filters: def.filters, ensure_experience_continuity: false, version: 1 };
}

const set = compileFlagSet([record(1, vectors.simple_flag.flag_definition), record(2, vectors.multivariate_flag.flag_definition)], [], {});

function ctx(distinctId: string) {
  return { distinctId, personProperties: {}, groups: {}, groupProperties: {}, hashKeyOverrides: {}, staticCohortIds: new Set<number>(), now: new Date(0) };
}

t.test('published consistency vectors: simple flag, 45% rollout (1000 ids)', async (t) => {
  const { results } = vectors.simple_flag;
  t.equal(results.length, 1000);
  let mismatches = 0;
  results.forEach((expected, i) => {
    const [simple] = evaluateFlags(set, ctx(`distinct_id_${i}`), { flagKeys: ['simple-flag'] });
    if (simple!.value !== expected) mismatches++;
  });
  t.equal(mismatches, 0, 'every id matches');
  t.equal(results.filter(Boolean).length, vectors.simple_flag.enabled_count);
});

t.test('published consistency vectors: multivariate flag, 55% rollout, 5 variants (1000 ids)', async (t) => {
  const { results } = vectors.multivariate_flag;
  t.equal(results.length, 1000);
  let mismatches = 0;
  const counts: Record<string, number> = {};
  results.forEach((expected, i) => {
    const [mv] = evaluateFlags(set, ctx(`distinct_id_${i}`), { flagKeys: ['multivariate-flag'] });
    if (mv!.value !== expected) mismatches++;
    const k = String(mv!.value);
    counts[k] = (counts[k] ?? 0) + 1;
  });
  t.equal(mismatches, 0, 'every id matches');
  t.same(counts, vectors.multivariate_flag.value_counts);
});

t.test('holdout golden hashes', async (t) => {
  for (const v of vectors.holdout_hash_golden.vectors) {
    t.equal(bucketHash('holdout-', v.identifier), v.expected_hash, v.hashed_string);
  }
});

t.test('intermediate hash values (computed samples)', async (t) => {
  for (const row of vectors.computed_samples_not_published.rows) {
    t.equal(bucketHash('simple-flag.', row.distinct_id), row.simple_flag_rollout_hash, `${row.distinct_id} simple rollout`);
    t.equal(bucketHash('multivariate-flag.', row.distinct_id), row.multivariate_rollout_hash, `${row.distinct_id} mv rollout`);
    t.equal(bucketHash('multivariate-flag.', row.distinct_id, 'variant'), row.multivariate_variant_hash, `${row.distinct_id} mv variant`);
  }
});

t.test('empty identifier hashes to 0 without hashing', async (t) => {
  t.equal(bucketHash('flag.', ''), 0);
  t.equal(bucketHash('flag.', '', 'variant'), 0);
});

// Deterministic pseudo-random strings covering ASCII, 2/3/4-byte UTF-8 and lone surrogates.
function randomStrings(count: number, seed: number): string[] {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const pieces = ['a', 'Z', '0', '.', '-', '_', ' ', 'é', 'ß', '€', '☃', '中', '😀', '\u{10348}', '\ud800', '\udc00', '\u0000', '\u007f', '\u0080', '\u07ff', '\u0800', '\uffff'];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const len = Math.floor(next() * (i % 10 === 0 ? 300 : 70));
    let str = '';
    for (let j = 0; j < len; j++) str += next() < 0.7 ? String.fromCharCode(32 + Math.floor(next() * 95)) : pieces[Math.floor(next() * pieces.length)];
    out.push(str);
  }
  return out;
}

t.test('sha1Hex equals node:crypto on random inputs (every length 0..200 plus random unicode)', async (t) => {
  let mismatches = 0;
  const inputs = [...Array.from({ length: 201 }, (_, n) => 'x'.repeat(n)), ...randomStrings(3000, 7)];
  for (const input of inputs) {
    if (sha1Hex(input) !== createHash('sha1').update(input, 'utf8').digest('hex')) mismatches++;
  }
  t.equal(mismatches, 0, `${inputs.length} inputs`);
});

t.test('sha1Prefix60 rounds exactly like parseInt(hex[0:15], 16)', async (t) => {
  let mismatches = 0;
  for (const input of randomStrings(20000, 99)) {
    const hex = createHash('sha1').update(input, 'utf8').digest('hex');
    if (sha1Prefix60(input, '', '') !== parseInt(hex.slice(0, 15), 16)) mismatches++;
  }
  t.equal(mismatches, 0);
});

t.test('sha1Prefix60 of prefix + identifier + salt equals node:crypto at every alignment, identifiers long and short', async (t) => {
  // The identifier's encoding is cached and its buffers reused from one identifier to the next: alternate lengths
  // (shorter after longer, past the initial buffer sizes), unicode and lone surrogates, behind prefixes of every
  // length mod 4.
  const identifiers = randomStrings(2000, 3);
  identifiers.push('x'.repeat(700), 'y', '😀'.repeat(150), 'z'.repeat(3), '');
  let mismatches = 0;
  let checked = 0;
  identifiers.forEach((id, i) => {
    const prefix = `flag-${'k'.repeat(i % 8)}.`;
    for (const salt of ['', 'variant']) {
      for (const hashedId of [id, id]) {
        const expected = createHash('sha1').update(Buffer.concat([Buffer.from(prefix), Buffer.from(hashedId), Buffer.from(salt)])).digest('hex');
        const want = hashedId.length === 0 ? NaN : parseInt(expected.slice(0, 15), 16);
        if (hashedId.length > 0 && sha1Prefix60(prefix, hashedId, salt) !== want) mismatches++;
        checked++;
      }
    }
  });
  t.equal(mismatches, 0, `${checked} hashes`);
});

t.test('concatenated parts hash like the concatenation', async (t) => {
  for (const [a, b, c] of [
    ['flag.', 'user', 'variant'],
    ['', '😀', ''],
    ['\ud800', '\udc00', ''], // a surrogate pair split across parts is two lone surrogates, as in Buffer.concat
  ] as const) {
    const expected = createHash('sha1').update(Buffer.concat([Buffer.from(a), Buffer.from(b), Buffer.from(c)])).digest('hex');
    t.equal(sha1Prefix60(a, b, c), parseInt(expected.slice(0, 15), 16), JSON.stringify([a, b, c]));
  }
});
