/**
 * The shape fuzzer's generator (test/e2e/shape-fuzz.test.ts): seeded capture requests across the dimensions a
 * public-key client controls — width (properties per event, in `$set`, `$set_once`, `$groups`), depth, key and
 * value length, events per batch, names no other event has, unicode, and the encodings posthog-js and the other
 * SDKs use (JSON, gzip by header or `?compression=gzip-js`, base64 and `data=` forms, lz64) — each request also
 * carrying a few ordinary events with known uuids, whose storage the test checks once and only once.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import LZString from 'lz-string';
import type { Random } from './fuzz.js';

/** One generated request: what to send and the ordinary events in it (their uuids must be stored if acknowledged). */
export interface ShapeCase {
  note: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Uuids of the ordinary events the request carries (stored exactly once if the answer is 200). */
  markers: string[];
}

const UNICODE = ['é', 'ß', '漢字', '😀', '\u202e', '\u0000', '\ud83d', '\udc00', 'ﬁ', '\u200b', 'Ω', '𝄞'];

function text(r: Random, length: number): string {
  if (length <= 0) return '';
  if (r.chance(0.7)) return 'x'.repeat(length);
  let out = '';
  while (out.length < length) out += r.chance(0.5) ? r.pick(UNICODE) : String.fromCharCode(r.int(0x20, 0x7e));
  return out.slice(0, length);
}

function nest(levels: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { n: v };
  return v;
}

/** Properties of a shaped event: one dimension pushed, often past its bound. */
function shapedProperties(r: Random, caseNo: number, index: number): { note: string; props: Record<string, unknown> } {
  const dimension = r.int(0, 7);
  const props: Record<string, unknown> = {};
  switch (dimension) {
    case 0: {
      const n = r.pick([100, 2_000, 9_999, 10_001, 30_000]);
      for (let k = 0; k < n; k++) props[`w${k}`] = k;
      return { note: `width ${n}`, props };
    }
    case 1: {
      const n = r.pick([50, 500, 10_001]);
      const map: Record<string, unknown> = {};
      for (let k = 0; k < n; k++) map[`s${k}`] = k;
      props[r.pick(['$set', '$set_once', '$groups'])] = map;
      return { note: `person or group map of ${n}`, props };
    }
    case 2: {
      const levels = r.pick([10, 126, 127, 129, 400]);
      props.tree = nest(levels, 'leaf');
      return { note: `depth ${levels}`, props };
    }
    case 3: {
      const length = r.pick([201, 5_000, 300_000]);
      props[text(r, length)] = 'long key';
      return { note: `key of ${length}`, props };
    }
    case 4: {
      const length = r.pick([10_000, 500_000, 999_000, 1_100_000]);
      props.value = text(r, length);
      return { note: `value of ${length}`, props };
    }
    case 5: {
      for (let k = 0; k < 100; k++) props[`u${caseNo}_${index}_${k}`] = text(r, r.int(0, 20));
      return { note: 'names no other event has', props };
    }
    case 6: {
      const length = r.pick([8_000, 10_001]);
      props.list = Array.from({ length }, (_, k) => k);
      return { note: `array of ${length}`, props };
    }
    default: {
      props.$group_type = 'company';
      props.$group_key = text(r, r.pick([20, 401]));
      props.$groups = { [text(r, r.pick([10, 401]))]: 'k' };
      return { note: 'group keys', props };
    }
  }
}

/** The request's events, then one of the encodings SDKs use. */
export function shapeCase(r: Random, caseNo: number, projectKey: string): ShapeCase {
  const markers: string[] = [];
  const events: unknown[] = [];
  const shaped = r.pick([1, 1, 5, 50, 2_000]);
  const notes = new Set<string>();
  for (let i = 0; i < shaped; i++) {
    if (i >= 3) {
      // Many events of one distinct id in one request (the attack's second half), small and alike.
      events.push({ event: 'many', distinct_id: `fz-many-${caseNo}`, properties: { i } });
      continue;
    }
    const { note, props } = shapedProperties(r, caseNo, i);
    notes.add(note);
    events.push({ event: r.chance(0.2) ? text(r, 300) : r.pick(['$pageview', 'shaped', '$groupidentify']), distinct_id: r.chance(0.2) ? text(r, 250) : `fz-${caseNo}-${i % 3}`, properties: props });
  }
  for (let m = 0; m < 3; m++) {
    const uuid = randomUUID();
    markers.push(uuid);
    events.splice(r.int(0, events.length), 0, { event: 'marker', distinct_id: `fz-marker-${caseNo % 7}`, uuid, properties: { case: caseNo } });
  }
  const json = JSON.stringify({ api_key: projectKey, batch: events });
  // lz-string's encoder takes seconds on megabytes: large requests go as JSON or gzip.
  const encoding = json.length > 2_000_000 ? r.int(0, 2) : r.int(0, 5);
  const base = { note: `${[...notes].join(', ')}; ${events.length} events`, markers };
  switch (encoding) {
    case 0:
      return { ...base, note: `${base.note}; json`, path: '/batch/', headers: { 'content-type': 'application/json' }, body: Buffer.from(json) };
    case 1:
      return { ...base, note: `${base.note}; gzip header`, path: '/batch/', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(json) };
    case 2:
      return { ...base, note: `${base.note}; gzip-js`, path: `/e/?compression=gzip-js&ver=1.200.0&_=${Date.now()}`, headers: { 'content-type': 'text/plain' }, body: gzipSync(json) };
    case 3:
      return { ...base, note: `${base.note}; base64 form`, path: '/e/', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`) };
    case 4:
      return { ...base, note: `${base.note}; data= form`, path: '/batch/', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`data=${encodeURIComponent(json)}`) };
    default:
      return { ...base, note: `${base.note}; lz64`, path: '/e/?compression=lz64', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`data=${encodeURIComponent(LZString.compressToBase64(json))}&compression=lz64`) };
  }
}
