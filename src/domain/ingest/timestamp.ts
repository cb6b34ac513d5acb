/**
 * Time parsing and the §1.7 event-time rules. All instants are epoch milliseconds as floats, so sub-millisecond
 * digits of client timestamps survive the skew arithmetic; only the final ISO string is cut to milliseconds.
 */

const HOUR_MS = 3_600_000;
/** §1.7 rule 5: events more than 23 h ahead of the server clock are instrumentation bugs; they get `now`. */
export const MAX_FUTURE_MS = 23 * HOUR_MS;
/** Numbers below this are read as epoch seconds, above as epoch ms (the 11-digit boundary of Django's `_` rule). */
const SECONDS_MS_BOUNDARY = 1e11;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Reads `count` decimal digits at `i`, or -1. */
function digits(s: string, i: number, count: number): number {
  if (i + count > s.length) return -1;
  let v = 0;
  for (let k = 0; k < count; k++) {
    const c = s.charCodeAt(i + k);
    if (!isDigit(c)) return -1;
    v = v * 10 + (c - 0x30);
  }
  return v;
}

function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

/**
 * Strict ISO-8601 / RFC 3339 subset: `YYYY-MM-DD`, optionally followed by `T` or a space and `HH:MM[:SS[.fff…]]`,
 * optionally a zone `Z`, `±HH`, `±HHMM` or `±HH:MM`. A string without a zone is UTC (never server-local time).
 * Returns NaN when the string is not in this form.
 */
export function parseIsoUtc(s: string): number {
  const n = s.length;
  const y = digits(s, 0, 4);
  if (y < 0 || s.charCodeAt(4) !== 0x2d) return NaN;
  const mo = digits(s, 5, 2);
  if (mo < 1 || mo > 12 || s.charCodeAt(7) !== 0x2d) return NaN;
  const d = digits(s, 8, 2);
  const leap = mo === 2 && (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0));
  if (d < 1 || d > DAYS_IN_MONTH[mo - 1]! + (leap ? 1 : 0)) return NaN;
  if (n === 10) return utcMs(y, mo, d, 0, 0, 0);

  const sep = s.charCodeAt(10);
  if (sep !== 0x54 && sep !== 0x74 && sep !== 0x20) return NaN; // T, t, space
  const h = digits(s, 11, 2);
  if (h < 0 || h > 23 || s.charCodeAt(13) !== 0x3a) return NaN;
  const mi = digits(s, 14, 2);
  if (mi < 0 || mi > 59) return NaN;
  let i = 16;
  let sec = 0;
  let frac = 0;
  if (s.charCodeAt(i) === 0x3a) {
    sec = digits(s, i + 1, 2);
    if (sec < 0 || sec > 59) return NaN;
    i += 3;
    const dot = s.charCodeAt(i);
    if (dot === 0x2e || dot === 0x2c) {
      let j = i + 1;
      let scale = 100; // first fractional digit is hundreds of ms
      while (j < n && isDigit(s.charCodeAt(j))) {
        frac += (s.charCodeAt(j) - 0x30) * scale;
        scale /= 10;
        j++;
      }
      if (j === i + 1) return NaN;
      i = j;
    }
  }

  let offsetMin = 0;
  if (i < n) {
    const z = s.charCodeAt(i);
    if ((z === 0x5a || z === 0x7a) && i + 1 === n) {
      // Z
    } else if (z === 0x2b || z === 0x2d) {
      const oh = digits(s, i + 1, 2);
      if (oh < 0 || oh > 23) return NaN;
      let om = 0;
      let j = i + 3;
      if (j < n) {
        if (s.charCodeAt(j) === 0x3a) j++;
        om = digits(s, j, 2);
        if (om < 0 || om > 59 || j + 2 !== n) return NaN;
      }
      offsetMin = (z === 0x2d ? -1 : 1) * (oh * 60 + om);
    } else {
      return NaN;
    }
  }
  return utcMs(y, mo, d, h, mi, sec) + frac - offsetMin * 60_000;
}

/**
 * "JS-Date-like" fallback for non-ISO strings (RFC 2822, `Jan 1 2023 10:00`, `2023/01/02 03:04:05`...).
 * V8 reads zone-less strings as server-local time; §1.7 wants UTC, so when appending " UTC" shifts the result by
 * exactly the local offset the string had no zone and the UTC reading wins. (On a server running in UTC — the
 * normal deployment — both readings agree.)
 */
function parseDateLike(s: string): number {
  const local = Date.parse(s);
  if (Number.isNaN(local)) return NaN;
  const utc = Date.parse(s + ' UTC');
  if (Number.isNaN(utc) || utc === local) return local;
  return local - utc === new Date(utc).getTimezoneOffset() * 60_000 ? utc : local;
}

function fromNumber(n: number): number {
  if (!Number.isFinite(n)) return NaN;
  return Math.abs(n) < SECONDS_MS_BOUNDARY ? n * 1000 : n;
}

function isNumericString(s: string): boolean {
  let dot = false;
  let any = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) any = true;
    else if (c === 0x2e && !dot && any) dot = true;
    else return false;
  }
  return any && s.charCodeAt(s.length - 1) !== 0x2e;
}

/**
 * Parse a client-supplied time: ISO-8601 string (UTC when zone-less), other date strings, or epoch numbers /
 * digit strings (below 1e11 = seconds, else ms). Returns epoch ms or null when unusable.
 */
export function parseTimestamp(value: unknown): number | null {
  let ms: number;
  if (typeof value === 'string') {
    const s = value.trim();
    if (s.length === 0) return null;
    if (isNumericString(s)) ms = fromNumber(Number(s));
    else {
      ms = parseIsoUtc(s);
      if (Number.isNaN(ms)) ms = parseDateLike(s);
    }
  } else if (typeof value === 'number') {
    ms = fromNumber(value);
  } else {
    return null;
  }
  return Number.isFinite(ms) ? ms : null;
}

/** Last valid instant of year 9999 and the first of year 0 (§1.7: other years are invalid). */
const MAX_MS = 253402300799999;
const MIN_MS = -62167219200000;

export type TimestampWarning = 'event_timestamp_in_future' | 'ignored_invalid_timestamp';

export interface EventTimeInput {
  /** Raw `timestamp` field of the event (any JSON value). */
  timestamp: unknown;
  /** Raw `offset` field of the event (ms before `now`). */
  offset: unknown;
  /** `properties.$ignore_sent_at` */
  ignoreSentAt: boolean;
}

/**
 * §1.7: final event time in epoch ms (whole ms) plus the ingestion warning PostHog would emit, if any.
 * 1. timestamp + sent_at → now + (timestamp − sent_at)  (clock-skew correction)
 * 2. timestamp, no sent_at → timestamp as given (offset is NOT consulted on this path)
 * 3. offset → now − offset (overrides rule 1; also used when there is no timestamp)
 * 4. nothing → now
 * 5. > 23 h in the future → now; unparsable or outside years 0..9999 → now
 */
export function resolveEventTime(
  input: EventTimeInput,
  now: number,
  sentAt: number | null,
): { ms: number; warning: TimestampWarning | null } {
  let result = now;
  // Falsy values (missing, null, '', 0) mean "absent", as in PostHog's `if (data['timestamp'])`.
  if (input.timestamp) {
    const ts = parseTimestamp(input.timestamp);
    if (ts === null) return { ms: now, warning: 'ignored_invalid_timestamp' };
    if (sentAt === null || input.ignoreSentAt) {
      result = ts;
    } else {
      result = now + (ts - sentAt);
      const off = offsetOf(input.offset);
      if (off !== null) result = now - off;
    }
  } else {
    const off = offsetOf(input.offset);
    if (off !== null) result = now - off;
  }
  if (result - now > MAX_FUTURE_MS) return { ms: now, warning: 'event_timestamp_in_future' };
  if (!(result >= MIN_MS && result <= MAX_MS)) return { ms: now, warning: 'ignored_invalid_timestamp' };
  return { ms: Math.floor(result), warning: null };
}

function offsetOf(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) && v !== 0 ? v : null;
  if (typeof v === 'string' && v.length > 0) {
    const n = Number(v);
    return Number.isFinite(n) && n !== 0 ? n : null;
  }
  return null;
}

/** ISO-8601 UTC with milliseconds, e.g. `2024-01-02T03:04:05.678Z`. */
export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
