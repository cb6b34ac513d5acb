/**
 * The fuzz matrix's tools: a seeded random source, a corpus of malformed inputs (bodies, query values, header
 * values, path segments), and a raw HTTP/1.1 client, because fetch refuses to send most of what a hostile client
 * can (invalid UTF-8 in the target, lone surrogates, odd header bytes).
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export class Random {
  private state: number;
  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

export interface FuzzBody {
  note: string;
  bytes: Buffer;
  /** Headers the body needs (content type, encoding). */
  headers: [string, string][];
}

const JSON_TYPE: [string, string] = ['content-type', 'application/json'];

/** Strings that break naive code: lone surrogates, NUL, RTL marks, astral characters, escapes, huge numbers. */
const NASTY_STRINGS = [
  '', ' ', '\u0000', 'null', 'undefined', 'NaN', '-1', '1e309', '0x1f', '__proto__', 'constructor', '../../etc/passwd',
  '\ud800', '\udfff', 'a\ud800b', '😀'.repeat(300), '\u202e\u202d', '%00', '%ZZ', '<script>', "'; drop table--",
  '\\', '"', 'x'.repeat(5000), '$identify', '$create_alias', '$groupidentify', '$merge_dangerously',
  ...HOSTILE_PATTERNS_LIST(),
];

/** Patterns that take a backtracking engine exponential or polynomial time, and LIKE / glob patterns of many wildcards. */
function HOSTILE_PATTERNS_LIST(): string[] {
  return ['(a+)+$', '(a|aa)+$', '(.*a){20}$', '(?i)(a+)+$', '^(\\w+\\s?)*$', '[ab]*a[ab]{999}c', '(?=a)', 'a{1001}', `${'%a'.repeat(2000)}%b`, `${'*a'.repeat(2000)}*b`, 'a'.repeat(3000) + '!'];
}
export const HOSTILE_PATTERNS = HOSTILE_PATTERNS_LIST();

/** Dates past the years 1 to 9999, relative and absolute, and a future one (an empty range). */
const NASTY_DATES = ['-99999999999d', '-800000d', '-99999y', '-99999999999h', '-9999999999M', '99999-01-01', '0000-12-31', '9999-12-31', '-1e9d', 'all'];

const NASTY_NUMBERS = ['1e400', '-1e400', '123456789012345678901234567890', '-0', '0.1e-400', '9007199254740993', 'NaN', 'Infinity', '-Infinity'];

/** A random JSON text of nasty values, up to `depth` levels (as text: it may hold tokens JSON.stringify never writes). */
export function randomJsonText(r: Random, depth: number): string {
  const roll = r.int(0, depth > 0 ? 9 : 5);
  switch (roll) {
    case 0: return JSON.stringify(r.pick(NASTY_STRINGS));
    case 1: return r.pick(NASTY_NUMBERS);
    case 2: return r.pick(['true', 'false', 'null']);
    case 3: return String(r.int(-5, 5));
    case 4: return `"\\ud${r.int(800, 999)}"`; // lone surrogate as an escape
    case 5: return JSON.stringify(r.pick(['a', 'b', 'key', 'email', 'distinct_id']));
    case 6:
    case 7: {
      const n = r.int(0, 4);
      return `[${Array.from({ length: n }, () => randomJsonText(r, depth - 1)).join(',')}]`;
    }
    default: {
      const n = r.int(0, 5);
      const keys = ['key', 'name', 'filters', 'properties', 'groups', 'value', 'type', 'operator', 'values', 'id', r.pick(NASTY_STRINGS)];
      return `{${Array.from({ length: n }, () => `${JSON.stringify(r.pick(keys))}:${randomJsonText(r, depth - 1)}`).join(',')}}`;
    }
  }
}

export function deepText(levels: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

/** Fields the private API's bodies use, so random bodies reach past the first checks. */
const API_FIELDS = [
  'key', 'name', 'filters', 'active', 'deleted', 'ensure_experience_continuity', 'properties', 'email', 'first_name',
  'level', 'scopes', 'label', 'role_id', 'user_uuid', 'feature_flags_access_level', 'description', 'tags', 'owner',
  'verified', 'post_to_chat', 'is_static', 'person_ids', 'person_id', 'main_distinct_id', '$unset', 'value', 'condition',
  'group_type_index', 'groups', 'multivariate', 'payloads', 'rollout_percentage', 'timezone',
  'steps', 'url', 'url_matching', 'regex', 'path_cleaning_filters', 'query', 'series',
];

/**
 * One malformed body. `shape` says what the route expects: a management JSON object, or a capture / flags
 * payload (raw bytes the worker decodes), which gets capture-shaped variants with the project key inside.
 */
export function fuzzBody(r: Random, shape: 'json' | 'raw', projectKey: string, maxBodyBytes: number): FuzzBody {
  const envelope = (inner: string) => `{"api_key":"${projectKey}","token":"${projectKey}","distinct_id":"fz","batch":[${inner}]}`;
  const eventWith = (props: string) => `{"event":"fuzz","distinct_id":"fuzz-${r.int(0, 9)}","properties":${props}}`;
  const kind = r.int(0, 17);
  switch (kind) {
    case 0: {
      const levels = r.pick([129, 600, 2_000, 100_000]);
      const text = deepText(levels, r.pick(['array', 'object'] as const));
      return { note: `deep ${levels}`, bytes: Buffer.from(shape === 'raw' ? envelope(eventWith(`{"x":${text}}`)) : `{"filters":${text},"properties":${text}}`), headers: [JSON_TYPE] };
    }
    case 1: {
      const size = r.int(100_000, Math.min(maxBodyBytes - 1000, 3_000_000));
      const blob = JSON.stringify('x'.repeat(size));
      return { note: `huge string ${size}`, bytes: Buffer.from(shape === 'raw' ? envelope(eventWith(`{"blob":${blob}}`)) : `{"key":${blob},"name":${blob}}`), headers: [JSON_TYPE] };
    }
    case 2:
    case 3: {
      const fields = Array.from({ length: r.int(1, 6) }, () => `${JSON.stringify(r.pick(API_FIELDS))}:${randomJsonText(r, 4)}`);
      const text = shape === 'raw' ? envelope(eventWith(`{${fields.join(',')}}`)) : `{${fields.join(',')}}`;
      return { note: 'wrong types', bytes: Buffer.from(text), headers: [JSON_TYPE] };
    }
    case 4: {
      // Invalid UTF-8: a lone continuation byte, a truncated sequence, an overlong encoding, 0xff.
      const bad = r.pick([[0x80], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xff, 0xfe], [0xed, 0xa0, 0x80]]);
      const head = Buffer.from(shape === 'raw' ? `{"api_key":"${projectKey}","event":"` : '{"key":"');
      const tail = Buffer.from(shape === 'raw' ? '","distinct_id":"u"}' : '","name":"n"}');
      return { note: 'invalid utf-8', bytes: Buffer.concat([head, Buffer.from(bad), tail]), headers: [JSON_TYPE] };
    }
    case 5: {
      const full = gzipSync(shape === 'raw' ? envelope(eventWith('{"a":1}')) : '{"key":"gz"}');
      return { note: 'truncated gzip', bytes: full.subarray(0, r.int(2, full.length - 1)), headers: r.chance(0.5) ? [['content-encoding', 'gzip']] : [] };
    }
    case 6: {
      const inflated = Buffer.alloc(maxBodyBytes + 1024 * 1024, 0x61);
      const once = gzipSync(inflated);
      const bomb = r.chance(0.5) ? once : gzipSync(once);
      return { note: 'gzip bomb', bytes: bomb, headers: [['content-encoding', r.pick(['gzip', 'gzip-js', ''])]] };
    }
    case 7: {
      const data = r.pick(['!!!!', 'N4Ig' + 'A'.repeat(r.int(1, 500)), 'a'.repeat(4001), 'eyJ9', '%%%', 'data', Buffer.from(randomJsonText(r, 3)).toString('base64')]);
      const compression = r.pick(['lz64', 'base64', 'gzip-js', 'lz-string', 'nope']);
      return { note: `form ${compression}`, bytes: Buffer.from(`data=${encodeURIComponent(data)}&compression=${compression}`), headers: [['content-type', 'application/x-www-form-urlencoded']] };
    }
    case 8: {
      const ct = r.pick(['application/json; charset=latin1', 'multipart/form-data; boundary=x', 'text/plain', 'application/xml', 'x/\u00ff', '']);
      return { note: `content type ${ct}`, bytes: Buffer.from(shape === 'raw' ? envelope(eventWith('{}')) : '{"key":"ct"}'), headers: ct ? [['content-type', ct]] : [] };
    }
    case 9:
      return { note: 'duplicate keys', bytes: Buffer.from(shape === 'raw' ? `{"api_key":"${projectKey}","event":"a","event":{"x":1},"distinct_id":"d","distinct_id":[1]}` : '{"key":"a","key":{"x":[1]},"filters":1,"filters":{"groups":"x"}}'), headers: [JSON_TYPE] };
    case 10: {
      const n = r.pick(NASTY_NUMBERS);
      return { note: `number ${n}`, bytes: Buffer.from(shape === 'raw' ? `{"api_key":"${projectKey}","event":${n},"distinct_id":${n},"timestamp":${n},"offset":${n},"properties":{"n":${n}}}` : `{"key":${n},"level":${n},"rollout_percentage":${n},"filters":{"groups":[{"rollout_percentage":${n}}]}}`), headers: [JSON_TYPE] };
    }
    case 11: {
      const text = shape === 'raw' ? envelope(eventWith('{"a":[1,2,{"b":"c"}]}')) : '{"key":"trunc","filters":{"groups":[{"properties":[]}]}}';
      return { note: 'truncated json', bytes: Buffer.from(text.slice(0, r.int(1, text.length - 1))), headers: [JSON_TYPE] };
    }
    case 12: {
      const text = r.pick(['', ' ', 'null', '[]', '"str"', '123', '\ufeff{}', '{}', 'true', '[[]]']);
      return { note: `scalar ${JSON.stringify(text)}`, bytes: Buffer.from(text), headers: [JSON_TYPE] };
    }
    case 13: {
      const bytes = Buffer.alloc(r.int(1, 2000));
      for (let i = 0; i < bytes.length; i++) bytes[i] = r.int(0, 255);
      return { note: 'random bytes', bytes, headers: r.chance(0.5) ? [JSON_TYPE] : [] };
    }
    case 14: {
      // Capture events that pass capture's checks but stress the apply loop: huge ids, aliases and group keys
      // (LMDB keys have a size limit), merges with odd ids, person updates of odd shapes.
      const big = JSON.stringify('k'.repeat(r.pick([199, 1000, 3000])));
      const events = [
        `{"event":"$create_alias","distinct_id":"fz-a","properties":{"alias":${big}}}`,
        `{"event":"$identify","distinct_id":${big},"properties":{"$anon_distinct_id":${big},"$set":{"a":${randomJsonText(r, 3)}}}}`,
        `{"event":"$groupidentify","distinct_id":"fz-g","properties":{"$group_type":${big},"$group_key":${big},"$group_set":${randomJsonText(r, 3)}}}`,
        `{"event":"e","distinct_id":"fz-g","properties":{"$groups":{"company":${big}},"$set":${randomJsonText(r, 3)},"$unset":${randomJsonText(r, 2)}}}`,
        `{"event":${big},"distinct_id":"fz-b","uuid":${randomJsonText(r, 1)},"timestamp":${randomJsonText(r, 1)},"$set_once":${randomJsonText(r, 2)}}`,
        `{"event":"$merge_dangerously","distinct_id":"fz-m","properties":{"alias":${randomJsonText(r, 2)},"$process_person_profile":${randomJsonText(r, 1)}}}`,
      ];
      const inner = Array.from({ length: r.int(1, 4) }, () => r.pick(events)).join(',');
      return { note: 'apply stress', bytes: Buffer.from(shape === 'raw' ? envelope(inner) : `{"properties":${randomJsonText(r, 3)},"key":${big}}`), headers: [JSON_TYPE] };
    }
    case 15: {
      const text = shape === 'raw' ? envelope(eventWith('{"a":1}')) : '{"key":"b64"}';
      const b64 = Buffer.from(text).toString('base64');
      return { note: 'base64 body cut', bytes: Buffer.from(b64.slice(0, r.int(1, b64.length))), headers: [['content-type', 'text/plain']] };
    }
    case 16:
      return { note: 'NaN tokens', bytes: Buffer.from(shape === 'raw' ? `{"api_key":"${projectKey}","event":"nan","distinct_id":"n","properties":{"a":NaN,"b":[Infinity,-Infinity],"c":"NaN"}}` : '{"key":"nan","rollout_percentage":NaN,"filters":{"groups":[{"rollout_percentage":Infinity}]}}'), headers: [JSON_TYPE] };
    default: {
      const text = shape === 'raw' ? randomJsonText(r, 6) : `{${Array.from({ length: r.int(0, 8) }, () => `${JSON.stringify(r.pick(API_FIELDS))}:${randomJsonText(r, 5)}`).join(',')}}`;
      return { note: 'random json', bytes: Buffer.from(text), headers: [JSON_TYPE] };
    }
  }
}

/** Percent-encodes every byte of the UTF-8 form (encodeURIComponent throws on lone surrogates; Buffer replaces them). */
function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) out += `%${byte.toString(16).padStart(2, '0').toUpperCase()}`;
  return out;
}

const QUERY_PARAMS = [
  'limit', 'offset', 'properties', 'select', 'where', 'format', 'after', 'before', 'distinct_id', 'person_id', 'event',
  'groups', 'token', 'api_key', 'v', 'compression', 'data', 'orderBy', 'key', 'value', 'event_name', 'search', 'email',
  'uuid', 'cohort', 'include_total', 'page', 'personal_api_key', 'send_cohorts', 'config', '_', 'ip', 'delete_events',
  'path_groupings', 'local_path_cleaning_filters', 'timeout', 'events', 'breakdown', 'formula', 'refresh',
  'date_from', 'date_to', 'target_date', 'entrance_period_start',
];

/** A query string (without `?`) of fuzzed parameters; raw bytes where a client could send them. */
export function fuzzQuery(r: Random, projectKey: string): string {
  const n = r.int(0, 4);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = r.pick(QUERY_PARAMS);
    let value: string;
    switch (r.int(0, 8)) {
      case 0: value = pct(randomJsonText(r, 4)); break;
      case 1: value = pct(deepText(r.pick([150, 300]), 'array')); break;
      case 2: value = r.pick(['%ZZ', '%', '%00', '%C3%28', '%ED%A0%80', '+', '%2B', '']); break;
      case 3: value = r.pick(NASTY_NUMBERS); break;
      case 4: value = projectKey; break;
      case 5: value = pct(r.pick(NASTY_STRINGS).slice(0, 300)); break;
      case 6: value = pct(JSON.stringify(r.chance(0.5)
        ? [{ key: r.pick(['$current_url', 'name', 'email']), value: r.pick(HOSTILE_PATTERNS), operator: r.pick(['regex', 'not_regex', 'icontains']), type: r.pick(['person', 'event']) }]
        : [{ regex: r.pick(HOSTILE_PATTERNS), alias: '\\1' }, r.pick(HOSTILE_PATTERNS)])); break;
      case 7: value = pct(r.pick(NASTY_DATES)); break;
      default: value = pct(JSON.stringify([{ key: 'a', value: randomJsonText(r, 2), operator: r.pick(['exact', 'regex', 'gt', 'is_date_before', 'nope']), type: r.pick(['person', 'event', 'cohort', 'group', 'x']) }]));
    }
    parts.push(r.chance(0.1) ? `${name}[]=${value}` : `${name}=${value}`);
  }
  return parts.join('&');
}

/** A value for a path parameter. Never a small valid integer: the fuzz must not delete the keys it runs with. */
export function fuzzSegment(r: Random): string {
  return r.pick([
    '0', '-1', '99999999999999999999', 'abc', '%00', '%ZZ', '%2F', '..', 'x'.repeat(300), '%F0%9F%98%80', '1e309', '1.5',
    '@current', '@me', '00000000-0000-0000-0000-000000000000', 'null', '%ED%A0%80', '%20', '9007199254740993',
  ]);
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The answer in `bytes` once it is complete (head and Content-Length bytes of body), else null. */
function parseAnswer(bytes: Buffer, method: string, closed: boolean): RawResponse | null {
  const split = bytes.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const lines = bytes.subarray(0, split).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = bytes.subarray(split + 4);
  const length = headers['content-length'];
  if (method === 'HEAD' || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
  // A Server-Sent Events stream (GET /flags/stream with a valid key) stays open by design: its head is the answer.
  if (status === 200 && (headers['content-type'] ?? '').startsWith('text/event-stream')) return { status, headers, body: rest };
  if (length !== undefined) return rest.length >= Number(length) ? { status, headers, body: rest.subarray(0, Number(length)) } : null;
  return closed ? { status, headers, body: rest } : null;
}

/**
 * One request on its own keep-alive connection, written byte for byte as given; resolves with the answer as soon
 * as it is complete. (Not `Connection: close`: a server that answers before reading a large body, as a 405 does,
 * then closes with unread bytes, and the kernel's reset can discard the answer before the client reads it.)
 * Rejects when the connection closes without an answer or none comes within `timeoutMs`.
 */
export function rawRequest(port: number, method: string, target: Buffer | string, headers: [string, string][], body: Buffer, timeoutMs = 30_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let failure: Error | null = null;
    let settled = false;
    const finish = (outcome: RawResponse | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (d) => {
      chunks.push(d);
      const answer = parseAnswer(Buffer.concat(chunks), method, false);
      if (answer) finish(answer);
    });
    // Writing the rest of a body the server did not want fails; only a connection that ends without an answer is
    // a failure.
    socket.on('error', (error) => (failure = error));
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      finish(parseAnswer(all, method, true) ?? new Error(`connection closed without an answer (${all.length} bytes${failure ? `, ${failure.message}` : ''})`));
    });
    const lines: (string | Buffer)[] = [`${method} `, typeof target === 'string' ? Buffer.from(target, 'latin1') : target, ' HTTP/1.1\r\nHost: 127.0.0.1\r\n'];
    for (const [k, v] of headers) lines.push(`${k}: `, Buffer.from(v, 'latin1'), '\r\n');
    if (body.length > 0 || method === 'POST' || method === 'PATCH' || method === 'PUT') lines.push(`Content-Length: ${body.length}\r\n`);
    lines.push('\r\n');
    socket.write(Buffer.concat(lines.map((l) => (typeof l === 'string' ? Buffer.from(l, 'latin1') : l))));
    if (body.length > 0) socket.write(body);
  });
}
