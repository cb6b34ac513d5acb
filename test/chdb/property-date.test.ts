// The date operators' reading of a property (src/domain/analytics/property-date.ts) against its SQL
// (src/domain/analytics/clickhouse/property-date-sql.ts) run by chdb: hand-picked texts at every edge of the grammar
// (offsets, fractions, days that do not exist, hours out of range, the years ClickHouse can hold, daylight saving's
// skipped and repeated hours) and generated ones around them, in zones with and without daylight saving (Lord Howe's
// is half an hour), must name the same instant or no instant on both engines.
import t from 'tap';
import { propertyInstantSql } from '../../src/domain/analytics/clickhouse/property-date-sql.js';
import { propertyInstant } from '../../src/domain/analytics/property-date.js';
import { chdbRows } from '../helpers/fold-rows.js';
import { Random } from '../helpers/fuzz.js';

const HAND_PICKED = [
  '2024-01-15', '2024-01-15T10:00', '2024-01-15 10:00:00', '2024-01-15T10:00:00Z', '2024-01-15t10:00:00z',
  '2024-01-15T10:00:00.123456Z', '2024-01-15T10:00:00.9999Z', '2024-01-15 10:00:00.123456789', '2024-01-15T10:00:00.5',
  '2024-01-15T10:00:00.', '2024-01-15T10:00Z', '2024-01-15Z', '2024-01-15T10:00:00+05:30', '2024-01-15T10:00:00+0530',
  '2024-01-15T10:00:00-08', '2024-01-15T10:00:00+23:59', '2024-01-15T10:00:00-00:30', '2024-01-15T10:00:00+24:00',
  '2024-02-30', '2023-02-29', '2024-02-29', '2100-02-29', '2000-02-29', '2024-04-31', '2024-13-01', '2024-00-10',
  '2024-01-15T25:00:00', '2024-01-15T24:00', '2024-01-15T10:60:00', '2024-01-15T10:00:60', '2024-1-5',
  '1899-12-31', '1900-01-01', '1900-01-01T00:00:00Z', '2299-12-31T23:59:59.999', '2300-01-01', '0001-01-01', '1950-06-01T12:00',
  // New York: skipped and repeated hours; London and Kolkata: a historical offset; Lord Howe: half an hour.
  '2024-03-10T02:30:00', '2024-03-10T02:00', '2024-03-10T03:00', '2024-03-10T01:59:59', '2024-11-03T01:30:00', '2024-11-03T00:59',
  '2024-11-03T02:00', '2024-04-07T01:45', '2024-10-06T02:15', '1968-06-01T12:00', '1942-09-01T12:00',
  '1705312800', '1705312800123', '-5', '0', '1.5e9', '12.5', '100000000000', '100000000001', '007',
  ' 2024-01-15', '2024-01-15 ', 'Jan 15 2024', '2024/01/15', '15/01/2024', '', 'true', 'null', '{"a":1}', '2024-01-15T10:00:00 Z',
];
const ZONES = ['UTC', 'America/New_York', 'Europe/London', 'Asia/Kolkata', 'Australia/Lord_Howe'];

/** Texts near the grammar: valid dates and times with one part bent (a digit more or less, a part out of range). */
function generated(random: Random, n: number): string[] {
  const pad = (v: number, w = 2) => String(v).padStart(w, '0');
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const year = random.pick([1900, 1969, 1970, 2024, 2026, 2299, 1899 + random.int(0, 402)]);
    let text = `${pad(year, 4)}-${pad(random.int(0, 13))}-${pad(random.int(0, 32))}`;
    if (random.chance(0.7)) {
      text += `${random.pick(['T', ' ', 't'])}${pad(random.int(0, 24))}:${pad(random.int(0, 60))}`;
      if (random.chance(0.7)) text += `:${pad(random.int(0, 60))}`;
      if (random.chance(0.3)) text += `.${String(random.int(0, 999_999_999)).slice(0, random.int(1, 9))}`;
      if (random.chance(0.5)) text += random.pick(['Z', `+${pad(random.int(0, 14))}:${pad(random.pick([0, 30, 45]))}`, `-${pad(random.int(0, 12))}${pad(random.pick([0, 30]))}`, `+${pad(random.int(0, 14))}`]);
    }
    out.push(text);
  }
  return out;
}

t.test('every text names the same instant, or none, on both engines', async (t) => {
  const random = new Random(Number(process.env.QUILL_DATE_SEED ?? 20261203));
  const texts = [...HAND_PICKED, ...generated(random, 400)];
  for (const zone of ZONES) {
    const params: Record<string, string> = { texts: JSON.stringify(texts) };
    let n = 0;
    const param = (v: string) => {
      params[`p${n}`] = v;
      return `{p${n++}:String}`;
    };
    const zoneSql = param(zone);
    const sql = `SELECT s, ${propertyInstantSql('s', zoneSql, zone === 'UTC', param)} FROM (SELECT arrayJoin(JSONExtract({texts:String}, 'Array(String)')) AS s)`;
    const rows = chdbRows({ sql, params }) as [string, number | null][];
    t.equal(rows.length, texts.length, `${zone}: a row per text`);
    const differ = rows.flatMap(([text, ms]) => {
      const local = propertyInstant(text, zone);
      const remote = ms === null ? NaN : Number(ms);
      return Object.is(local, remote) ? [] : [`${JSON.stringify(text)}: local ${local}, ClickHouse ${remote}`];
    });
    t.same(differ, [], `${zone}: ${rows.filter(([, ms]) => ms !== null).length} of ${texts.length} texts are dates, each the same instant`);
  }
});

t.test('numbers, as JSON holds them, are Unix times', async (t) => {
  t.equal(propertyInstant(1705312800, 'UTC'), 1705312800000, 'seconds');
  t.equal(propertyInstant(1705312800123, 'UTC'), 1705312800123, 'milliseconds past 1e11');
  t.equal(propertyInstant('2024-01-15', 'America/New_York'), Date.UTC(2024, 0, 15, 5), "a bare date at the zone's midnight");
  t.equal(propertyInstant('2024-01-15T10:00:00.9999Z', 'UTC'), Date.UTC(2024, 0, 15, 10, 0, 0, 999), 'a fraction cut to milliseconds');
  t.ok(Number.isNaN(propertyInstant(true, 'UTC')), 'a boolean is no date');
});
