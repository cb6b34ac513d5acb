// HogQL's dateDiff on the local engine (src/domain/hogql/functions.ts) against ClickHouse's, run by chdb: seconds,
// minutes and hours between 3,000 pairs of instants of 1985-2017 in zones with daylight saving and with half-hour
// and 45-minute offsets (an hour there starts at half past, or a quarter to), as e2e/hogql-clickhouse compares
// whole queries in UTC and New York only.
import t from 'tap';
import { dateDiff } from '../../src/domain/hogql/functions.js';
import { chdbRows } from '../helpers/fold-rows.js';

const ZONES = ['UTC', 'America/New_York', 'Europe/London', 'Europe/Amsterdam', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/St_Johns', 'Australia/Lord_Howe'];
const PAIRS = 3000;

for (const zone of ZONES) {
  t.test(zone, async (t) => {
    const diff = (unit: string) => `dateDiff('${unit}', fromUnixTimestamp64Milli(a, {zone:String}), fromUnixTimestamp64Milli(b, {zone:String}))`;
    const rows = chdbRows({
      sql: `SELECT a, b, ${diff('second')}, ${diff('minute')}, ${diff('hour')} FROM (SELECT toInt64(500000000000 + number * 123456789 % 1000000000000) AS a, a + toInt64((number * 7919 % 200000) * 1000 + number % 997) AS b FROM numbers(${PAIRS}))`,
      params: { zone },
    }) as number[][];
    t.equal(rows.length, PAIRS);
    for (const [u, unit] of (['second', 'minute', 'hour'] as const).entries()) {
      const differ = rows.filter((r) => dateDiff(unit, Number(r[0]), Number(r[1]), zone) !== Number(r[2 + u]))
        .map((r) => `${new Date(Number(r[0])).toISOString()} → ${new Date(Number(r[1])).toISOString()}: ClickHouse ${r[2 + u]}, local ${dateDiff(unit, Number(r[0]), Number(r[1]), zone)}`);
      t.same(differ.slice(0, 5), [], `${unit}s: the same for every pair (${differ.length} differ)`);
    }
  });
}
