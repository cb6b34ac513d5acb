/**
 * The scalar functions and operators of Quill's HogQL, by ClickHouse name. Each is chosen and specialised once per
 * call site for its argument types (`make`), then called per value. Date functions work in the project's time zone
 * (HogQL shows and truncates every DateTime in it), or in the zone named by their last argument.
 *
 * `slots`: the function is constant within every 15-minute UTC slot of its DateTime argument (every time zone's
 * offset is a multiple of 15 minutes, so local hours, days, weeks, months and years all begin on such a slot). The
 * scan then computes it once per slot of a block instead of once per event (src/domain/hogql/vectors.ts).
 */
import { addIntervals, fromLocal, isTimeZone, offsetAt, toLocal, truncate } from '../analytics/time-zone.js';
import { compileMatcher, propertyNumber, propertyText, type FilterLeaf } from '../analytics/property-filters.js';
import { propertyInstant } from '../analytics/property-date.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import { hogqlError, unsupported } from './errors.js';
import { compileLike, SQL_LIKE } from '../patterns/like.js';
import { PatternError, requireRegex, type LinearRegex } from '../patterns/regex.js';
import {
  compareLoose, compareValues, DAY_MS, dateOf, dateTimeOf, isObject, isNumeric, localDay, numberOf, textOf, truth,
  type IntervalUnit, type IntervalValue, type Type, type Value, type ValueContext,
} from './values.js';

export type Impl = (args: Value[]) => Value;

export interface FnDef {
  min: number;
  max: number;
  type: (args: Type[]) => Type;
  make: (args: Type[], ctx: ValueContext) => Impl;
  /** Called with null arguments too (otherwise any null argument gives null). */
  nulls?: 'handle';
  slots?: boolean;
}

/** The type two branches share (if, coalesce…): the same, the non-null one, Float for mixed numbers, else JSON. */
export function commonType(types: Type[]): Type {
  const real = types.filter((t) => t !== 'Null');
  if (real.length === 0) return 'Null';
  if (real.every((t) => t === real[0])) return real[0]!;
  if (real.every(isNumeric)) return 'Float';
  if (real.every((t) => t === 'Date' || t === 'DateTime')) return 'DateTime';
  return 'JSON';
}

/** The value of `v` (of type `from`) as a value of type `to` (branches of if/coalesce with a common type). */
export function converter(from: Type, to: Type, ctx: ValueContext): (v: Value) => Value {
  if (from === to || from === 'Null' || to === 'JSON' && (from === 'String' || isNumeric(from) || from === 'Bool')) return (v) => v;
  if (to === 'Float') return (v) => numberOf(v, from);
  if (to === 'DateTime') return (v) => dateTimeOf(v, from, ctx);
  if (to === 'JSON' || to === 'String' || to === 'Any') return (v) => (v === null ? null : typeof v === 'object' ? v : textOf(v, from, ctx));
  return (v) => v;
}

/** Remembers the last conversion: a constant argument is converted once, not once per row. */
function memo<T>(fn: (v: Value) => T): (v: Value) => T {
  let lastIn: Value | undefined;
  let lastOut!: T;
  return (v) => {
    if (v === lastIn && v !== undefined) return lastOut;
    lastIn = v;
    lastOut = fn(v);
    return lastOut;
  };
}

/**
 * How two values of these types compare: in the calendar when one is a Date (and the other not a DateTime), as
 * instants when one is a DateTime or Date (text parsed in the project's zone), as persons when one is a person
 * (text read as a uuid), as numbers or texts when both are, and loosely (src/domain/hogql/values.ts) otherwise.
 */
export function comparator(ta: Type, tb: Type, ctx: ValueContext): (a: Value, b: Value) => number | null {
  const order = (x: number | null, y: number | null) => (x === null || y === null ? null : x < y ? -1 : x > y ? 1 : 0);
  if ((ta === 'Date' && tb !== 'DateTime') || (tb === 'Date' && ta !== 'DateTime')) {
    const ca = memo((v) => dateOf(v, ta, ctx));
    const cb = memo((v) => dateOf(v, tb, ctx));
    return (a, b) => order(ca(a), cb(b));
  }
  if (ta === 'DateTime' || tb === 'DateTime') {
    const ca = memo((v) => dateTimeOf(v, ta, ctx));
    const cb = memo((v) => dateTimeOf(v, tb, ctx));
    return (a, b) => order(ca(a), cb(b));
  }
  if (ta === 'Person' || tb === 'Person') {
    const person = (t: Type) => memo((v) => (v === null ? null : t === 'Person' ? (v as number) : ctx.personOfUuid(propertyText(v)) ?? -1));
    const ca = person(ta);
    const cb = person(tb);
    return (a, b) => order(ca(a), cb(b));
  }
  if (isNumeric(ta) && isNumeric(tb)) return (a, b) => order(a as number | null, b as number | null);
  if (ta === 'String' && tb === 'String') return (a, b) => (a === null || b === null ? null : a < b ? -1 : a > b ? 1 : 0);
  if (ta === 'Bool' && tb === 'Bool') return (a, b) => (a === null || b === null ? null : Number(a) - Number(b));
  if (ta === 'Bool' || tb === 'Bool') {
    // `properties.flag = true`: a boolean against its JSON value or text.
    const asBool = (t: Type) => (v: Value) => (v === null ? null : t === 'Bool' ? v : truth(v as Value));
    const ca = asBool(ta);
    const cb = asBool(tb);
    return (a, b) => {
      const x = ca(a);
      const y = cb(b);
      return x === null || y === null ? null : Number(x) - Number(y);
    };
  }
  return compareLoose;
}

const compare = (test: (c: number) => boolean): FnDef => ({
  min: 2, max: 2, type: () => 'Bool', nulls: 'handle',
  make: ([ta, tb], ctx) => {
    const cmp = comparator(ta!, tb!, ctx);
    return ([a, b]) => {
      const c = cmp(a!, b!);
      return c === null ? null : test(c);
    };
  },
});

const like = (caseless: boolean, negate: boolean): FnDef => ({
  min: 2, max: 2, type: () => 'Bool',
  make: ([ta, tb], ctx) => {
    const pattern = memo((p) => compileLike(textOf(p, tb!, ctx) ?? '', SQL_LIKE, caseless));
    return ([a, p]) => {
      const hit = pattern(p!).test(textOf(a!, ta!, ctx) ?? '');
      return negate ? !hit : hit;
    };
  },
});

/** A pattern as ClickHouse reads it (RE2, linear time: src/domain/patterns/regex.ts); an invalid one is the query's error. */
function regex(text: string): LinearRegex {
  try {
    return requireRegex(text, 'clickhouse');
  } catch (error) {
    if (error instanceof PatternError) return hogqlError(error.message);
    throw error;
  }
}

// ---- numbers

function numeric(fn: (...n: number[]) => number, type: Type | ((args: Type[]) => Type) = 'Float', arity = 1): FnDef {
  return {
    min: arity, max: arity, type: typeof type === 'function' ? type : () => type,
    make: (types) => (vs) => {
      const ns: number[] = [];
      for (let i = 0; i < vs.length; i++) {
        const n = numberOf(vs[i]!, types[i]!);
        if (n === null) return null;
        ns.push(n);
      }
      return fn(...ns);
    },
  };
}

const intIfInts = (args: Type[]) => (args.every((t) => t === 'Int') ? 'Int' : 'Float');

// ---- dates

const UNIT_MS: Partial<Record<IntervalUnit, number>> = { Second: 1000, Minute: 60_000, Hour: 3_600_000 };

/** An instant plus an interval: sub-day units as durations, days and longer in the local calendar. */
export function addInterval(ms: number, type: Type, iv: IntervalValue, timeZone: string, sign = 1): number {
  const n = iv.n * sign;
  const unitMs = UNIT_MS[iv.interval];
  if (type === 'Date') {
    if (unitMs !== undefined) return hogqlError('Adding seconds, minutes or hours to a Date: convert it with toDateTime() first.');
    if (iv.interval === 'Day' || iv.interval === 'Week') return ms + n * (iv.interval === 'Week' ? 7 : 1) * DAY_MS;
    const d = new Date(ms);
    const months = n * (iv.interval === 'Year' ? 12 : iv.interval === 'Quarter' ? 3 : 1);
    const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1));
    const last = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
    return Date.UTC(target.getUTCFullYear(), target.getUTCMonth(), Math.min(d.getUTCDate(), last));
  }
  if (unitMs !== undefined) return ms + n * unitMs;
  switch (iv.interval) {
    case 'Day':
      return addIntervals(ms, 'day', n, timeZone);
    case 'Week':
      return addIntervals(ms, 'week', n, timeZone);
    case 'Month':
      return addIntervals(ms, 'month', n, timeZone);
    case 'Quarter':
      return addIntervals(ms, 'month', 3 * n, timeZone);
    default:
      return addIntervals(ms, 'month', 12 * n, timeZone);
  }
}

/** The zone a date function works in: its optional last argument (a constant), else the project's. */
function zoneArg(value: Value | undefined, ctx: ValueContext): string {
  if (value === undefined || value === null) return ctx.timeZone;
  const zone = String(value);
  if (!isTimeZone(zone)) hogqlError(`Unknown time zone "${zone}".`);
  return zone;
}

type Unit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
const UNITS: Record<string, Unit> = {
  second: 'second', seconds: 'second', ss: 'second', s: 'second', minute: 'minute', minutes: 'minute', mi: 'minute', n: 'minute',
  hour: 'hour', hours: 'hour', hh: 'hour', h: 'hour', day: 'day', days: 'day', dd: 'day', d: 'day', week: 'week', weeks: 'week', wk: 'week', ww: 'week',
  month: 'month', months: 'month', mm: 'month', m: 'month', quarter: 'quarter', quarters: 'quarter', qq: 'quarter', q: 'quarter',
  year: 'year', years: 'year', yyyy: 'year', yy: 'year',
};

function unitOf(v: Value): Unit {
  const u = UNITS[String(v).toLowerCase()];
  if (!u) hogqlError(`Unknown date unit '${String(v)}'.`);
  return u;
}

/** The local start of the unit holding an instant (`date_trunc`, `toStartOf…`), in `zone`. */
function startOf(ms: number, unit: Unit, zone: string, weekMode = 0): number {
  switch (unit) {
    case 'second':
      return ms - (((ms % 1000) + 1000) % 1000);
    case 'minute':
      return ms - (((ms % 60_000) + 60_000) % 60_000);
    case 'hour':
      return truncate(ms, 'hour', zone);
    case 'day':
      return truncate(ms, 'day', zone);
    case 'week': {
      const sunday = truncate(ms, 'week', zone);
      if (weekMode % 2 === 0) return sunday;
      // Monday-first weeks: the Monday on or before the instant's local day.
      const monday = addIntervals(sunday, 'day', 1, zone);
      return monday > ms ? addIntervals(sunday, 'day', -6, zone) : monday;
    }
    case 'month':
      return truncate(ms, 'month', zone);
    case 'quarter': {
      const l = toLocal(ms, zone);
      return fromLocal({ year: l.year, month: l.month - ((l.month - 1) % 3), day: 1 }, zone);
    }
    case 'year':
      return fromLocal({ year: toLocal(ms, zone).year, month: 1, day: 1 }, zone);
  }
}

/**
 * A truncation: `toStartOfDay(x[, zone])` and friends. `out` is what it returns: a DateTime (hours, days) or the
 * local calendar date (weeks, months: ClickHouse returns a Date for those).
 */
function startOfFn(unit: Unit, out: 'DateTime' | 'Date', weekModeArg = false): FnDef {
  return {
    // Minutes and seconds change within a 15-minute slot; hours and longer units do not.
    min: 1, max: weekModeArg ? 3 : 2, type: () => out, slots: unit !== 'minute' && unit !== 'second',
    make: (types, ctx) => {
      let zone: string | null = null;
      return (vs) => {
        const t = dateTimeOf(vs[0]!, types[0]!, ctx);
        if (t === null) return null;
        const mode = weekModeArg && vs.length > 1 ? Number(vs[1]) : 0;
        zone ??= weekModeArg ? zoneArg(vs[2], ctx) : zoneArg(vs[1], ctx);
        const start = startOf(t, unit, zone, mode);
        return out === 'Date' ? localDay(start, zone) : start;
      };
    },
  };
}

/** A part of the local date-time of an instant (`toYear`, `toHour`…). */
function partFn(part: (l: ReturnType<typeof toLocal>, ms: number) => number, slots = true): FnDef {
  return {
    min: 1, max: 2, type: () => 'Int', slots,
    make: (types, ctx) => (vs) => {
      const t = types[0] === 'Date' ? (vs[0] as number) : dateTimeOf(vs[0]!, types[0]!, ctx);
      if (t === null) return null;
      const l = types[0] === 'Date' ? toLocal(t, 'UTC') : toLocal(t, zoneArg(vs[1], ctx));
      return part(l, t);
    },
  };
}

/**
 * Number of `unit` boundaries between two instants in `zone` (ClickHouse's dateDiff). Seconds, minutes and hours
 * are elapsed ones, not wall-clock ones (from midnight to 05:30 on a 25-hour day is 6 hours): ClickHouse numbers
 * hours from the epoch shifted by the zone's offset at the epoch, so that in a zone of half-hour offsets (Kolkata,
 * St John's) an hour starts at half past. Measured against chdb over 3,000 pairs of 1985-2017 in nine zones: equal
 * in all but Monrovia, whose offset at the epoch (-0:44:30) ClickHouse applies otherwise.
 */
export function dateDiff(unit: Unit, a: number, b: number, zone: string): number {
  switch (unit) {
    case 'second':
      return Math.floor(b / 1000) - Math.floor(a / 1000);
    case 'minute':
      return Math.floor(b / 60_000) - Math.floor(a / 60_000);
    case 'hour': {
      const atEpoch = offsetAt(0, zone);
      return Math.floor((b + atEpoch) / 3_600_000) - Math.floor((a + atEpoch) / 3_600_000);
    }
    case 'day':
      return Math.round((localDay(b, zone) - localDay(a, zone)) / DAY_MS);
    case 'week': {
      // Weeks start on Monday; day 0 (1970-01-01) was a Thursday.
      const week = (ms: number) => Math.floor((localDay(ms, zone) / DAY_MS + 3) / 7);
      return week(b) - week(a);
    }
    default: {
      const la = toLocal(a, zone);
      const lb = toLocal(b, zone);
      const months = (lb.year - la.year) * 12 + (lb.month - la.month);
      if (unit === 'month') return months;
      if (unit === 'quarter') return Math.floor((lb.year * 12 + lb.month - 1) / 3) - Math.floor((la.year * 12 + la.month - 1) / 3);
      return lb.year - la.year;
    }
  }
}

const INTERVAL_UNITS: IntervalUnit[] = ['Second', 'Minute', 'Hour', 'Day', 'Week', 'Month', 'Quarter', 'Year'];
const UNIT_INTERVAL: Record<Unit, IntervalUnit> = { second: 'Second', minute: 'Minute', hour: 'Hour', day: 'Day', week: 'Week', month: 'Month', quarter: 'Quarter', year: 'Year' };

function addFn(sign: number): FnDef {
  return {
    min: 2, max: 2,
    type: ([a, b]) => {
      if (a === 'DateTime' || b === 'DateTime') return 'DateTime';
      if (a === 'Date' || b === 'Date') return 'Date';
      if (a === 'Interval' && b === 'Interval') return hogqlError('Adding two intervals is not supported.');
      return intIfInts([a!, b!]);
    },
    make: ([ta, tb], ctx) => {
      if (ta === 'DateTime' && tb === 'DateTime' && sign < 0) return hogqlError('Subtracting two DateTimes is not supported: use dateDiff(unit, a, b).');
      if (ta === 'Date' && tb === 'Date' && sign < 0) return hogqlError('Subtracting two Dates is not supported: use dateDiff(unit, a, b).');
      if (ta === 'Interval' && sign < 0) return hogqlError('An interval minus a date is not supported.');
      const temporal = ta === 'DateTime' || ta === 'Date' ? 0 : tb === 'DateTime' || tb === 'Date' ? 1 : -1;
      if (temporal >= 0) {
        const tt = temporal === 0 ? ta! : tb!;
        const other = temporal === 0 ? tb! : ta!;
        return (vs) => {
          const t = vs[temporal] as number;
          const o = vs[1 - temporal]!;
          if (other === 'Interval') return addInterval(t, tt, o as IntervalValue, ctx.timeZone, sign);
          const n = numberOf(o, other);
          if (n === null) return null;
          // ClickHouse adds seconds to a DateTime and days to a Date.
          return tt === 'Date' ? t + sign * Math.trunc(n) * DAY_MS : t + sign * n * 1000;
        };
      }
      return (vs) => {
        const a = numberOf(vs[0]!, ta!);
        const b = numberOf(vs[1]!, tb!);
        return a === null || b === null ? null : a + sign * b;
      };
    },
  };
}

function dateAddFn(sign: number): FnDef {
  return {
    min: 3, max: 3, type: (t) => (t[2] === 'Date' ? 'Date' : 'DateTime'),
    make: (types, ctx) => (vs) => {
      const n = numberOf(vs[1]!, types[1]!);
      const t = types[2] === 'Date' ? (vs[2] as number) : dateTimeOf(vs[2]!, types[2]!, ctx);
      if (n === null || t === null) return null;
      return addInterval(t, types[2] === 'Date' ? 'Date' : 'DateTime', { interval: UNIT_INTERVAL[unitOf(vs[0]!)], n }, ctx.timeZone, sign);
    },
  };
}

function addUnitFn(unit: IntervalUnit, sign: number): FnDef {
  return {
    min: 2, max: 2, type: (t) => (t[0] === 'Date' && !UNIT_MS[unit] ? 'Date' : 'DateTime'),
    make: (types, ctx) => (vs) => {
      const n = numberOf(vs[1]!, types[1]!);
      const t = types[0] === 'Date' && !UNIT_MS[unit] ? (vs[0] as number) : dateTimeOf(vs[0]!, types[0]!, ctx);
      if (n === null || t === null) return null;
      return addInterval(t, types[0] === 'Date' && !UNIT_MS[unit] ? 'Date' : 'DateTime', { interval: unit, n }, ctx.timeZone, sign);
    },
  };
}

// ---- text

function textFn(fn: (s: string, ...rest: Value[]) => Value, type: Type, min = 1, max = min): FnDef {
  return { min, max, type: () => type, make: (types, ctx) => (vs) => fn(textOf(vs[0]!, types[0]!, ctx) ?? '', ...vs.slice(1)) };
}

/**
 * A JSON value out of a JSON text or object, by a path of keys (JSONExtract… and property access). A text that is
 * not JSON gives null, as ClickHouse gives the default for it; so does JSON nested deeper than MAX_JSON_DEPTH (a
 * string of the query or of an event's property is bounded by nothing else, and what takes the value's text,
 * JSON.stringify, recurses).
 */
export function jsonPath(v: Value, path: readonly Value[]): Value {
  let cur: unknown = v;
  if (typeof cur === 'string' && (cur.startsWith('{') || cur.startsWith('['))) {
    try {
      cur = JSON.parse(cur);
    } catch {
      return null;
    }
    if (nestsDeeperThan(cur, MAX_JSON_DEPTH)) return null;
  }
  for (const key of path) {
    if (Array.isArray(cur) && typeof key === 'number') cur = cur[key > 0 ? key - 1 : cur.length + key];
    else if (isObject(cur) && key !== null) cur = cur[String(key)];
    else return null;
    if (cur === undefined) return null;
  }
  return cur as Value;
}

function jsonExtract(convert: (v: Value) => Value, type: Type): FnDef {
  return { min: 1, max: 16, type: () => type, nulls: 'handle', make: () => (vs) => (vs[0] === null ? null : convert(jsonPath(vs[0]!, vs.slice(1)))) };
}

const toFloat: FnDef = { min: 1, max: 1, type: () => 'Float', make: ([t]) => (vs) => numberOf(vs[0]!, t!) };
const toInt: FnDef = {
  min: 1, max: 1, type: () => 'Int',
  make: ([t]) => (vs) => {
    const n = numberOf(vs[0]!, t!);
    return n === null || !Number.isFinite(n) ? null : Math.trunc(n);
  },
};

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  // ClickHouse rounds half to even for floats in round(); banker's rounding of the scaled value.
  const x = n * f;
  const r = Math.round(x);
  const even = Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : r;
  return even / f;
}

export const FUNCTIONS: Record<string, FnDef> = {
  // comparisons and logic
  equals: compare((c) => c === 0),
  notEquals: compare((c) => c !== 0),
  less: compare((c) => c < 0),
  greater: compare((c) => c > 0),
  lessOrEquals: compare((c) => c <= 0),
  greaterOrEquals: compare((c) => c >= 0),
  like: like(false, false),
  ilike: like(true, false),
  notLike: like(false, true),
  notILike: like(true, true),
  match: {
    min: 2, max: 2, type: () => 'Bool',
    make: ([ta, tb], ctx) => {
      const pattern = memo((p) => regex(textOf(p, tb!, ctx) ?? ''));
      return ([a, p]) => pattern(p!).test(textOf(a!, ta!, ctx) ?? '');
    },
  },
  and: logic(false),
  or: logic(true),
  not: { min: 1, max: 1, type: () => 'Bool', make: () => (vs) => { const t = truth(vs[0]!); return t === null ? null : !t; } },
  xor: { min: 2, max: 2, type: () => 'Bool', make: () => (vs) => { const a = truth(vs[0]!); const b = truth(vs[1]!); return a === null || b === null ? null : a !== b; } },
  isNull: { min: 1, max: 1, type: () => 'Bool', nulls: 'handle', make: () => (vs) => vs[0] === null },
  isNotNull: { min: 1, max: 1, type: () => 'Bool', nulls: 'handle', make: () => (vs) => vs[0] !== null },
  in: inFn(false),
  notIn: inFn(true),

  // conditionals
  if: {
    min: 3, max: 3, nulls: 'handle', type: (t) => commonType([t[1]!, t[2]!]),
    make: (types, ctx) => {
      const to = commonType([types[1]!, types[2]!]);
      const a = converter(types[1]!, to, ctx);
      const b = converter(types[2]!, to, ctx);
      return (vs) => (truth(vs[0]!) === true ? a(vs[1]!) : b(vs[2]!));
    },
  },
  multiIf: {
    min: 3, max: 1025, nulls: 'handle',
    type: (t) => commonType(t.filter((_, i) => i % 2 === 1 || i === t.length - 1)),
    make: (types, ctx) => {
      if (types.length % 2 === 0) hogqlError('multiIf needs an odd number of arguments: conditions and values, then the default.');
      const to = commonType(types.filter((_, i) => i % 2 === 1 || i === types.length - 1));
      const convs = types.map((t) => converter(t, to, ctx));
      return (vs) => {
        for (let i = 0; i + 1 < vs.length; i += 2) if (truth(vs[i]!) === true) return convs[i + 1]!(vs[i + 1]!);
        return convs[vs.length - 1]!(vs[vs.length - 1]!);
      };
    },
  },
  coalesce: {
    min: 1, max: 1024, nulls: 'handle', type: (t) => commonType(t),
    make: (types, ctx) => {
      const to = commonType(types);
      const convs = types.map((t) => converter(t, to, ctx));
      return (vs) => {
        for (let i = 0; i < vs.length; i++) if (vs[i] !== null) return convs[i]!(vs[i]!);
        return null;
      };
    },
  },
  ifNull: {
    min: 2, max: 2, nulls: 'handle', type: (t) => commonType(t),
    make: (types, ctx) => {
      const to = commonType(types);
      const a = converter(types[0]!, to, ctx);
      const b = converter(types[1]!, to, ctx);
      return (vs) => (vs[0] !== null ? a(vs[0]!) : b(vs[1]!));
    },
  },
  nullIf: {
    min: 2, max: 2, nulls: 'handle', type: (t) => t[0]!,
    make: ([ta, tb], ctx) => {
      const cmp = comparator(ta!, tb!, ctx);
      return (vs) => (vs[0] !== null && cmp(vs[0]!, vs[1]!) === 0 ? null : vs[0]!);
    },
  },
  assumeNotNull: { min: 1, max: 1, nulls: 'handle', type: (t) => t[0]!, make: () => (vs) => vs[0]! },
  greatest: extreme(1),
  least: extreme(-1),

  // arithmetic
  plus: addFn(1),
  minus: addFn(-1),
  multiply: numeric((a, b) => a * b, intIfInts, 2),
  divide: numeric((a, b) => a / b, 'Float', 2),
  intDiv: {
    min: 2, max: 2, type: () => 'Int',
    make: (types) => (vs) => {
      const a = numberOf(vs[0]!, types[0]!);
      const b = numberOf(vs[1]!, types[1]!);
      if (a === null || b === null) return null;
      if (b === 0) return hogqlError('Division by zero in intDiv.');
      return Math.trunc(a / b);
    },
  },
  modulo: numeric((a, b) => a % b, intIfInts, 2),
  negate: numeric((a) => -a, (t) => (t[0] === 'Int' ? 'Int' : 'Float'), 1),
  abs: numeric(Math.abs, (t) => (t[0] === 'Int' ? 'Int' : 'Float'), 1),
  floor: { min: 1, max: 2, type: () => 'Float', make: (types) => (vs) => { const n = numberOf(vs[0]!, types[0]!); const d = vs.length > 1 ? Number(vs[1]) : 0; return n === null ? null : Math.floor(n * 10 ** d) / 10 ** d; } },
  ceil: { min: 1, max: 2, type: () => 'Float', make: (types) => (vs) => { const n = numberOf(vs[0]!, types[0]!); const d = vs.length > 1 ? Number(vs[1]) : 0; return n === null ? null : Math.ceil(n * 10 ** d) / 10 ** d; } },
  round: { min: 1, max: 2, type: () => 'Float', make: (types) => (vs) => { const n = numberOf(vs[0]!, types[0]!); return n === null ? null : round(n, vs.length > 1 ? Number(vs[1]) : 0); } },
  sqrt: numeric(Math.sqrt, 'Float', 1),
  exp: numeric(Math.exp, 'Float', 1),
  log: numeric(Math.log, 'Float', 1),
  log2: numeric(Math.log2, 'Float', 1),
  log10: numeric(Math.log10, 'Float', 1),
  pow: numeric(Math.pow, 'Float', 2),
  sign: numeric(Math.sign, 'Int', 1),

  // conversions
  toString: { min: 1, max: 1, type: () => 'String', make: ([t]: Type[], ctx: ValueContext) => (vs: Value[]) => textOf(vs[0]!, t!, ctx) },
  toFloat,
  toFloatOrNull: toFloat,
  toFloatOrZero: { ...toFloat, make: ([t]) => (vs) => numberOf(vs[0]!, t!) ?? 0 },
  toInt,
  toIntOrNull: toInt,
  toIntOrZero: { ...toInt, make: (types, ctx) => { const f = toInt.make(types, ctx); return (vs) => f(vs) ?? 0; } },
  toBool: { min: 1, max: 1, type: () => 'Bool', make: () => (vs) => truth(vs[0]!) },
  toUUID: { min: 1, max: 1, type: () => 'String', make: ([t], ctx) => (vs) => textOf(vs[0]!, t!, ctx) },
  toDate: {
    min: 1, max: 2, type: () => 'Date', slots: true,
    make: (types, ctx) => (vs) => (vs.length > 1 && types[0] !== 'Date' ? (() => { const t = dateTimeOf(vs[0]!, types[0]!, ctx); return t === null ? null : localDay(t, zoneArg(vs[1], ctx)); })() : dateOf(vs[0]!, types[0]!, ctx)),
  },
  toDateTime: { min: 1, max: 2, type: () => 'DateTime', make: (types, ctx) => (vs) => dateTimeOf(vs[0]!, types[0]!, ctx) },
  parseDateTimeBestEffort: { min: 1, max: 2, type: () => 'DateTime', make: (types, ctx) => (vs) => dateTimeOf(vs[0]!, types[0]! === 'DateTime' ? 'DateTime' : 'String', ctx) },

  // dates
  now: { min: 0, max: 0, type: () => 'DateTime', make: (_t, ctx) => () => ctx.now },
  today: { min: 0, max: 0, type: () => 'Date', make: (_t, ctx) => () => localDay(ctx.now, ctx.timeZone) },
  yesterday: { min: 0, max: 0, type: () => 'Date', make: (_t, ctx) => () => localDay(ctx.now, ctx.timeZone) - DAY_MS },
  toStartOfMinute: startOfFn('minute', 'DateTime'),
  toStartOfInterval: {
    min: 2, max: 3, type: (t) => (t[0] === 'Date' ? 'Date' : 'DateTime'),
    make: (types, ctx) => (vs) => {
      const iv = vs[1] as IntervalValue;
      if (iv.n !== 1 || iv.interval === 'Week') unsupported('toStartOfInterval() with weeks or more than one unit', 'Use toStartOfWeek(), toStartOfDay()….');
      const t = dateTimeOf(vs[0]!, types[0]!, ctx);
      if (t === null) return null;
      const zone = zoneArg(vs[2], ctx);
      const start = startOf(t, iv.interval.toLowerCase() as Unit, zone);
      return types[0] === 'Date' ? localDay(start, zone) : start;
    },
  },
  toStartOfHour: startOfFn('hour', 'DateTime'),
  toStartOfDay: startOfFn('day', 'DateTime'),
  toStartOfWeek: startOfFn('week', 'Date', true),
  toMonday: { ...startOfFn('week', 'Date'), make: (types, ctx) => { const f = startOfFn('week', 'Date', true).make(types, ctx); return (vs) => f([vs[0]!, 1, ...(vs.length > 1 ? [vs[1]!] : [])]); } },
  toStartOfMonth: startOfFn('month', 'Date'),
  toStartOfQuarter: startOfFn('quarter', 'Date'),
  toStartOfYear: startOfFn('year', 'Date'),
  toYear: partFn((l) => l.year),
  toQuarter: partFn((l) => Math.floor((l.month - 1) / 3) + 1),
  toMonth: partFn((l) => l.month),
  toDayOfMonth: partFn((l) => l.day),
  toDayOfWeek: partFn((l) => ((new Date(Date.UTC(l.year, l.month - 1, l.day)).getUTCDay() + 6) % 7) + 1),
  toDayOfYear: partFn((l) => Math.round((Date.UTC(l.year, l.month - 1, l.day) - Date.UTC(l.year, 0, 1)) / DAY_MS) + 1),
  toHour: partFn((l) => l.hour),
  toMinute: partFn((l) => l.minute, false),
  toSecond: partFn((l) => l.second, false),
  toYYYYMM: partFn((l) => l.year * 100 + l.month),
  toYYYYMMDD: partFn((l) => l.year * 10000 + l.month * 100 + l.day),
  toUnixTimestamp: { min: 1, max: 1, type: () => 'Int', make: ([t], ctx) => (vs) => { const ms = dateTimeOf(vs[0]!, t!, ctx); return ms === null ? null : Math.floor(ms / 1000); } },
  fromUnixTimestamp: { min: 1, max: 1, type: () => 'DateTime', make: ([t]) => (vs) => { const n = numberOf(vs[0]!, t!); return n === null ? null : n * 1000; } },
  dateDiff: {
    min: 3, max: 4, type: () => 'Int',
    make: (types, ctx) => (vs) => {
      const a = dateTimeOf(vs[1]!, types[1]!, ctx);
      const b = dateTimeOf(vs[2]!, types[2]!, ctx);
      return a === null || b === null ? null : dateDiff(unitOf(vs[0]!), a, b, zoneArg(vs[3], ctx));
    },
  },
  dateTrunc: {
    min: 2, max: 3, type: (t) => (t[1] === 'Date' ? 'Date' : 'DateTime'),
    make: (types, ctx) => (vs) => {
      const t = dateTimeOf(vs[1]!, types[1]!, ctx);
      if (t === null) return null;
      const zone = zoneArg(vs[2], ctx);
      const start = startOf(t, unitOf(vs[0]!), zone);
      return types[1] === 'Date' ? localDay(start, zone) : start;
    },
  },
  dateAdd: dateAddFn(1),
  dateSub: dateAddFn(-1),
  ...Object.fromEntries(INTERVAL_UNITS.flatMap((u) => [
    [`toInterval${u}`, { min: 1, max: 1, type: () => 'Interval', make: ([t]: Type[]) => (vs: Value[]) => { const n = numberOf(vs[0]!, t!); return n === null ? null : { interval: u, n }; } } satisfies FnDef],
    [`add${u}s`, addUnitFn(u, 1)],
    [`subtract${u}s`, addUnitFn(u, -1)],
  ])),
  formatDateTime: {
    min: 2, max: 3, type: () => 'String',
    make: (types, ctx) => (vs) => {
      const t = dateTimeOf(vs[0]!, types[0]!, ctx);
      return t === null ? null : formatDateTime(t, String(vs[1]), zoneArg(vs[2], ctx));
    },
  },

  // text
  lower: textFn((s) => s.toLowerCase(), 'String'),
  upper: textFn((s) => s.toUpperCase(), 'String'),
  lowerUTF8: textFn((s) => s.toLowerCase(), 'String'),
  upperUTF8: textFn((s) => s.toUpperCase(), 'String'),
  length: {
    min: 1, max: 1, type: () => 'Int',
    make: ([t], ctx) => (vs) => (Array.isArray(vs[0]) ? vs[0].length : Buffer.byteLength(textOf(vs[0]!, t!, ctx) ?? '')),
  },
  lengthUTF8: textFn((s) => [...s].length, 'Int'),
  empty: { min: 1, max: 1, type: () => 'Bool', make: ([t], ctx) => (vs) => (Array.isArray(vs[0]) ? vs[0].length === 0 : (textOf(vs[0]!, t!, ctx) ?? '') === '') },
  notEmpty: { min: 1, max: 1, type: () => 'Bool', make: ([t], ctx) => (vs) => (Array.isArray(vs[0]) ? vs[0].length > 0 : (textOf(vs[0]!, t!, ctx) ?? '') !== '') },
  concat: { min: 1, max: 1024, type: () => 'String', make: (types, ctx) => (vs) => vs.map((v, i) => textOf(v, types[i]!, ctx)).join('') },
  substring: {
    min: 2, max: 3, type: () => 'String',
    make: (types, ctx) => (vs) => {
      const s = textOf(vs[0]!, types[0]!, ctx) ?? '';
      const offset = Number(vs[1]);
      const start = offset > 0 ? offset - 1 : offset < 0 ? Math.max(0, s.length + offset) : 0;
      return vs.length > 2 ? s.substr(start, Math.max(0, Number(vs[2]))) : s.slice(start);
    },
  },
  trim: textFn((s) => s.trim(), 'String'),
  trimBoth: textFn((s) => s.trim(), 'String'),
  trimLeft: textFn((s) => s.trimStart(), 'String'),
  trimRight: textFn((s) => s.trimEnd(), 'String'),
  reverse: textFn((s) => [...s].reverse().join(''), 'String'),
  replaceAll: textFn((s, from, to) => s.split(String(from)).join(String(to)), 'String', 3),
  replaceOne: textFn((s, from, to) => s.replace(String(from), String(to)), 'String', 3),
  replaceRegexpAll: textFn((s, re, to) => regex(String(re)).replace(s, String(to), true), 'String', 3),
  replaceRegexpOne: textFn((s, re, to) => regex(String(re)).replace(s, String(to), false), 'String', 3),
  startsWith: textFn((s, p) => s.startsWith(String(p)), 'Bool', 2),
  endsWith: textFn((s, p) => s.endsWith(String(p)), 'Bool', 2),
  position: textFn((s, p) => s.indexOf(String(p)) + 1, 'Int', 2),
  positionCaseInsensitive: textFn((s, p) => s.toLowerCase().indexOf(String(p).toLowerCase()) + 1, 'Int', 2),
  extract: textFn((s, re) => { const m = regex(String(re)).exec(s); return m === null ? '' : (m.length > 1 ? m[1]! : m[0]!); }, 'String', 2),
  splitByChar: { min: 2, max: 2, type: () => 'Array', make: (types, ctx) => (vs) => (textOf(vs[1]!, types[1]!, ctx) ?? '').split(String(vs[0])) },
  splitByString: { min: 2, max: 2, type: () => 'Array', make: (types, ctx) => (vs) => (textOf(vs[1]!, types[1]!, ctx) ?? '').split(String(vs[0])) },
  leftPad: textFn((s, n, fill) => s.padStart(Number(n), fill === undefined ? ' ' : String(fill)), 'String', 2, 3),
  rightPad: textFn((s, n, fill) => s.padEnd(Number(n), fill === undefined ? ' ' : String(fill)), 'String', 2, 3),
  domain: textFn((s) => { try { return new URL(s).hostname; } catch { return ''; } }, 'String'),
  path: textFn((s) => { try { return new URL(s).pathname; } catch { return ''; } }, 'String'),

  // JSON
  JSONExtractString: jsonExtract((v) => (v === null ? '' : typeof v === 'string' ? v : ''), 'String'),
  JSONExtractRaw: jsonExtract((v) => (v === null ? '' : JSON.stringify(v)), 'String'),
  JSONExtractFloat: jsonExtract((v) => propertyNumber(v) ?? 0, 'Float'),
  JSONExtractInt: jsonExtract((v) => Math.trunc(propertyNumber(v) ?? 0), 'Int'),
  JSONExtractBool: jsonExtract((v) => v === true, 'Bool'),
  JSONHas: jsonExtract((v) => v !== null, 'Bool'),
  /**
   * `$propertyFilter(value, filter)`: one PostHog property filter (its JSON, a constant) decided for a value, as
   * the analyses decide it (src/domain/analytics/property-filters.ts). ActorsQuery's person filters over `persons`.
   */
  $propertyFilter: {
    min: 2, max: 2, type: () => 'Bool', nulls: 'handle',
    make: (_types, ctx) => {
      const matcher = memo((text) => {
        const leaf = JSON.parse(String(text)) as FilterLeaf;
        const base = compileMatcher(leaf, (v) => dateTimeOf(v as Value, typeof v === 'number' ? 'Float' : 'String', ctx) ?? NaN, (v) => propertyInstant(v, ctx.timeZone));
        return leaf.negation ? (present: boolean, v: unknown) => !base(present, v) : base;
      });
      return (vs) => matcher(vs[1]!)(vs[0] !== null, vs[0]);
    },
  },
  /** Property access below the first level (`properties.$set.plan`), and `x['key']` on a JSON value. */
  $get: { min: 2, max: 2, type: () => 'JSON', make: () => (vs) => jsonPath(vs[0]!, [vs[1]!]) },

  // arrays and tuples
  tuple: { min: 0, max: 4096, nulls: 'handle', type: () => 'Array', make: () => (vs) => vs.slice() },
  array: { min: 0, max: 4096, nulls: 'handle', type: () => 'Array', make: () => (vs) => vs.slice() },
  arrayElement: {
    min: 2, max: 2, type: (t) => (t[0] === 'Array' ? 'Any' : 'JSON'),
    make: () => (vs) => {
      const [a, i] = vs;
      if (Array.isArray(a) && typeof i === 'number') return (a[i > 0 ? i - 1 : a.length + i] ?? null) as Value;
      return jsonPath(a!, [i!]);
    },
  },
  tupleElement: { min: 2, max: 2, type: () => 'Any', make: () => (vs) => (Array.isArray(vs[0]) ? ((vs[0][Number(vs[1]) - 1] ?? null) as Value) : null) },
  has: {
    min: 2, max: 2, type: () => 'Bool',
    make: () => (vs) => Array.isArray(vs[0]) && vs[0].some((x) => x !== null && vs[1] !== null && compareValues(x as Value, vs[1]!) === 0),
  },
};

/**
 * AND (`decisive` false) and OR (true) with SQL's three values: a decisive argument decides, else an unknown
 * (null) one makes the result unknown.
 */
function logic(decisive: boolean): FnDef {
  return {
    min: 1, max: 1024, type: () => 'Bool', nulls: 'handle',
    make: () => (vs) => {
      let unknown = false;
      for (const v of vs) {
        const t = truth(v);
        if (t === decisive) return decisive;
        if (t === null) unknown = true;
      }
      return unknown ? null : !decisive;
    },
  };
}

/** `x IN (…)` with a right side known only per row (the constant case is a set, src/domain/hogql/bind.ts). */
function inFn(negate: boolean): FnDef {
  return {
    min: 2, max: 2, type: () => 'Bool',
    make: ([ta], ctx) => {
      const cmp = comparator(ta!, 'Any', ctx);
      return ([x, list]) => {
        const items = Array.isArray(list) ? (list as Value[]) : [list!];
        const hit = items.some((item) => cmp(x!, item) === 0);
        return negate ? !hit : hit;
      };
    },
  };
}

function extreme(sign: number): FnDef {
  return {
    min: 1, max: 1024, type: (t) => commonType(t),
    make: (types, ctx) => {
      const to = commonType(types);
      const convs = types.map((t) => converter(t, to, ctx));
      return (vs) => {
        let best: Value = null;
        for (let i = 0; i < vs.length; i++) {
          const v = convs[i]!(vs[i]!);
          if (v === null) return null;
          if (best === null || sign * compareValues(v, best) > 0) best = v;
        }
        return best;
      };
    },
  };
}

/** ClickHouse's formatDateTime: the common `%` codes. */
function formatDateTime(ms: number, format: string, zone: string): string {
  const l = toLocal(ms, zone);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const codes: Record<string, () => string> = {
    Y: () => p(l.year, 4), y: () => p(l.year % 100), m: () => p(l.month), d: () => p(l.day), e: () => String(l.day).padStart(2, ' '),
    H: () => p(l.hour), M: () => p(l.minute), S: () => p(l.second), i: () => p(l.minute), s: () => p(l.second),
    F: () => `${p(l.year, 4)}-${p(l.month)}-${p(l.day)}`, T: () => `${p(l.hour)}:${p(l.minute)}:${p(l.second)}`,
    D: () => `${p(l.month)}/${p(l.day)}/${p(l.year % 100)}`, j: () => p(Math.round((Date.UTC(l.year, l.month - 1, l.day) - Date.UTC(l.year, 0, 1)) / DAY_MS) + 1, 3),
    u: () => String(((new Date(Date.UTC(l.year, l.month - 1, l.day)).getUTCDay() + 6) % 7) + 1), '%': () => '%',
  };
  return format.replace(/%(.)/g, (_all, c: string) => {
    const f = codes[c];
    if (!f) unsupported(`formatDateTime's %${c}`);
    return f();
  });
}

/** Functions Quill refuses by name with a hint (rather than "unknown function"). */
export const REFUSED_FUNCTIONS: Record<string, string> = {
  arrayJoin: 'ARRAY JOIN and arrayJoin()',
  toTimeZone: 'toTimeZone()',
  sleep: 'sleep()',
  sleepEachRow: 'sleepEachRow()',
  file: 'file()',
  url: 'url()',
  currentDatabase: 'currentDatabase()',
  version: 'version()',
};

const LOWER = new Map<string, string>(Object.keys(FUNCTIONS).map((k) => [k.toLowerCase(), k]));
const ALIASES: Record<string, string> = {
  date_diff: 'dateDiff', date_trunc: 'dateTrunc', date_add: 'dateAdd', date_sub: 'dateSub', substr: 'substring', mid: 'substring',
  power: 'pow', ln: 'log', lcase: 'lower', ucase: 'upper', locate: 'position', todatetime64: 'toDateTime', tofloat64: 'toFloat',
  tofloat64ornull: 'toFloatOrNull', tofloat32: 'toFloat', toint64: 'toInt', toint32: 'toInt', touint64: 'toInt', touint32: 'toInt', toint8: 'toInt',
  touint8: 'toInt', toint64ornull: 'toIntOrNull', toint32ornull: 'toIntOrNull', tostartofisoweek: 'toMonday', timestampadd: 'dateAdd',
  timestampsub: 'dateSub', isnotnull: 'isNotNull', isnull: 'isNull', char_length: 'lengthUTF8', character_length: 'lengthUTF8',
  ifnull: 'ifNull', nullif: 'nullIf', todecimal64: 'toFloat',
};

/** The canonical name of a scalar function (names are matched without regard to case), or undefined. */
export function scalarFunction(name: string): string | undefined {
  const lower = name.toLowerCase();
  return LOWER.get(ALIASES[lower]?.toLowerCase() ?? lower);
}
