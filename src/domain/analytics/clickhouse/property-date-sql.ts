/**
 * A property's text as the instant the date operators compare (src/domain/analytics/property-date.ts, the local
 * engine's reading), printed for ClickHouse: epoch milliseconds as a Nullable(Float64), NULL where the text names no
 * date. The grammar's patterns are the local engine's own, matched first, so ClickHouse's lenient best-effort parser
 * only ever reads texts it reads exactly as the local engine does (measured in chdb: it would otherwise take
 * `25:00` as the next day's 01:00 and `10:60` as 11:00).
 */
import { PROPERTY_LOCAL_DATE_PATTERN, PROPERTY_NUMBER_PATTERN, PROPERTY_ZONED_DATE_PATTERN } from '../property-date.js';

/**
 * `text`: a String expression (the property's text); `timeZone`: the project's zone as printed (a constant);
 * `utc`: whether that zone is UTC (then a wall-clock time is its own instant); `param` prints a text constant.
 */
export function propertyInstantSql(text: string, timeZone: string, utc: boolean, param: (text: string) => string): string {
  const number = `toFloat64OrNull(${text})`;
  // The text read as UTC: for a date-time with an offset, its instant; for one without, its wall-clock time.
  const asUtc = `toInt64(toUnixTimestamp64Milli(parseDateTime64BestEffortOrNull(${text}, 3, 'UTC')))`;
  return `multiIf(`
    + `match(${text}, ${param(PROPERTY_NUMBER_PATTERN)}), if(${number} > 1e11, ${number}, ${number} * 1000), `
    + `match(${text}, ${param(PROPERTY_ZONED_DATE_PATTERN)}), toFloat64(${asUtc}), `
    + `match(${text}, ${param(PROPERTY_LOCAL_DATE_PATTERN)}), toFloat64(${utc ? asUtc : fromLocalSql(asUtc, timeZone)}), `
    + `NULL)`;
}

/**
 * time-zone.ts's `fromLocal` in SQL: the wall-clock time `wall` (ms, as if UTC) in `timeZone` as an instant. The
 * zone's offsets a day before and a day after give two candidates; one fits when its local time is `wall` again.
 * Both fit: the earlier (a repeated hour). One: that one. Neither (a skipped hour): the one by the earlier offset,
 * which lands after the gap.
 */
function fromLocalSql(wall: string, timeZone: string): string {
  // The offset as the local time's text read back as UTC, less the instant: timeZoneOffset answers a day too much
  // for some instants before 1970 in some zones (measured in chdb: 4,596 of 47,792 sampled instants of 1901-2299 in
  // London, 601 in Kolkata; the text was right at every one).
  const offsetMs = (at: string) => `(toUnixTimestamp64Milli(toDateTime64(toString(fromUnixTimestamp64Milli(${at}, ${timeZone})), 3, 'UTC')) - (${at}))`;
  const before = `(${wall} - ${offsetMs(`${wall} - 86400000`)})`;
  const after = `(${wall} - ${offsetMs(`${wall} + 86400000`)})`;
  const fits = (t: string) => `(${t} + ${offsetMs(t)} = ${wall})`;
  return `multiIf(${fits(before)} AND ${fits(after)}, least(${before}, ${after}), ${fits(before)}, ${before}, ${fits(after)}, ${after}, ${before})`;
}
