import t from 'tap';
import { normalizeEvent, parseIsoUtc, parseTimestamp, resolveEventTime } from '../../src/domain/ingest/index.js';

const NOW = Date.UTC(2024, 5, 15, 12, 0, 0, 0); // 2024-06-15T12:00:00.000Z
const iso = (ms: number) => new Date(ms).toISOString();
const H = 3_600_000;

t.test('parseIsoUtc', async (t) => {
  const cases: [string, number][] = [
    ['2024-06-15T12:00:00Z', NOW],
    ['2024-06-15T12:00:00.000Z', NOW],
    ['2024-06-15T12:00:00.123456Z', NOW + 123.456],
    ['2024-06-15T12:00:00,5Z', NOW + 500],
    ['2024-06-15T12:00:00', NOW], // zone-less = UTC, never server-local
    ['2024-06-15 12:00:00', NOW],
    ['2024-06-15T12:00Z', NOW],
    ['2024-06-15T14:00:00+02:00', NOW],
    ['2024-06-15T14:00:00+0200', NOW],
    ['2024-06-15T07:00:00-05', NOW],
    ['2024-06-15', Date.UTC(2024, 5, 15)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['0050-01-01T00:00:00Z', -60589296000000], // years below 100 are not mapped to 19xx
  ];
  for (const [s, ms] of cases) t.equal(parseIsoUtc(s), ms, s);
  for (const bad of ['2023-02-29T00:00:00Z', '2024-13-01', '2024-06-15T25:00:00Z', '2024-06-15T12:00:00Zjunk', '15/06/2024', '']) {
    t.ok(Number.isNaN(parseIsoUtc(bad)), `invalid: ${JSON.stringify(bad)}`);
  }
});

t.test('parseTimestamp: other accepted forms', async (t) => {
  const cases: [unknown, number | null][] = [
    ['Sat, 15 Jun 2024 12:00:00 GMT', NOW],
    ['Jun 15 2024 12:00:00 UTC', NOW],
    ['Sat, 15 Jun 2024 14:00:00 +0200', NOW],
    [NOW, NOW],
    [NOW / 1000, NOW], // epoch seconds
    [String(NOW), NOW],
    ['1718452800', NOW],
    ['not a date', null],
    [{}, null],
    [true, null],
    [Number.NaN, null],
  ];
  for (const [v, ms] of cases) t.equal(parseTimestamp(v), ms, JSON.stringify(v));
});

t.test('event time rules (§1.7)', async (t) => {
  type Case = { name: string; timestamp?: unknown; offset?: unknown; sentAt?: number | null; ignoreSentAt?: boolean; ms: number; warning?: string };
  const cases: Case[] = [
    { name: 'rule 4: nothing → now', ms: NOW },
    { name: 'rule 2: timestamp, no sent_at → as given', timestamp: '2024-06-01T00:00:00.000Z', ms: Date.UTC(2024, 5, 1) },
    {
      name: 'rule 1: skew correction now + (timestamp − sent_at)',
      timestamp: '2024-06-15T10:00:00.000Z', // client clock is 3 h behind; event happened 30 s before sending
      sentAt: Date.UTC(2024, 5, 15, 10, 0, 30),
      ms: NOW - 30_000,
    },
    {
      name: 'rule 1 keeps sub-ms precision until the final cut',
      timestamp: '2024-06-15T10:00:00.000900Z',
      sentAt: Date.UTC(2024, 5, 15, 10, 0, 0) + 0.4,
      ms: NOW, // now + 0.5 ms → floors to now
    },
    {
      name: '$ignore_sent_at: true disables skew correction',
      timestamp: '2024-06-01T00:00:00.000Z', sentAt: NOW - H, ignoreSentAt: true,
      ms: Date.UTC(2024, 5, 1),
    },
    { name: 'rule 3: offset without timestamp → now − offset', offset: 5000, ms: NOW - 5000 },
    { name: 'rule 3: offset overrides the skew-corrected result', timestamp: '2024-06-15T10:00:00Z', sentAt: Date.UTC(2024, 5, 15, 10), offset: 1234, ms: NOW - 1234 },
    { name: 'offset is not consulted when there is no sent_at', timestamp: '2024-06-01T00:00:00Z', offset: 1234, ms: Date.UTC(2024, 5, 1) },
    { name: 'numeric-string offset', offset: '250', ms: NOW - 250 },
    { name: 'rule 5: 23 h + 1 ms in the future → now', timestamp: iso(NOW + 23 * H + 1), ms: NOW, warning: 'event_timestamp_in_future' },
    { name: 'exactly 23 h in the future is kept', timestamp: iso(NOW + 23 * H), ms: NOW + 23 * H },
    { name: 'future via skew correction → now', timestamp: '2024-06-20T00:00:00Z', sentAt: Date.UTC(2024, 5, 15), ms: NOW, warning: 'event_timestamp_in_future' },
    { name: 'negative offset far in the future → now', offset: -24 * H, ms: NOW, warning: 'event_timestamp_in_future' },
    { name: 'unparsable timestamp → now', timestamp: 'yesterday', ms: NOW, warning: 'ignored_invalid_timestamp' },
    { name: 'unparsable timestamp ignores offset and sent_at', timestamp: 'garbage', offset: 1000, sentAt: NOW, ms: NOW, warning: 'ignored_invalid_timestamp' },
    { name: 'year before 0 → now', offset: NOW + 62167219200001, ms: NOW, warning: 'ignored_invalid_timestamp' },
    { name: 'past timestamps are kept (no lower bound)', timestamp: '1999-12-31T23:59:59.999Z', ms: Date.UTC(1999, 11, 31, 23, 59, 59, 999) },
    { name: 'empty string timestamp = absent', timestamp: '', ms: NOW },
  ];
  for (const c of cases) {
    const r = resolveEventTime({ timestamp: c.timestamp, offset: c.offset, ignoreSentAt: c.ignoreSentAt ?? false }, NOW, c.sentAt ?? null);
    t.same({ at: iso(r.ms), warning: r.warning }, { at: iso(c.ms), warning: c.warning ?? null }, c.name);
  }
});

t.test('normalizeEvent renders the final time as ISO UTC with ms', async (t) => {
  const cases: [string, Record<string, unknown>, number | null, string][] = [
    ['no timestamp', {}, null, '2024-06-15T12:00:00.000Z'],
    ['offset timestamp, no sent_at', { timestamp: '2024-06-15T08:30:00.5-02:00' }, null, '2024-06-15T10:30:00.500Z'],
    ['skew corrected', { timestamp: '2024-06-15T11:00:00Z' }, Date.UTC(2024, 5, 15, 11, 0, 10), '2024-06-15T11:59:50.000Z'],
    ['offset', { offset: 60_000 }, null, '2024-06-15T11:59:00.000Z'],
    ['future', { timestamp: '2030-01-01T00:00:00Z' }, null, '2024-06-15T12:00:00.000Z'],
    ['invalid', { timestamp: 'soon' }, null, '2024-06-15T12:00:00.000Z'],
    ['$ignore_sent_at', { timestamp: '2024-06-15T11:00:00Z', properties: { $ignore_sent_at: true } }, NOW - 5 * H, '2024-06-15T11:00:00.000Z'],
  ];
  for (const [name, extra, sentAt, expected] of cases) {
    const r = normalizeEvent({ event: 'e', distinct_id: 'd', ...extra }, { now: NOW, sentAt, ip: null });
    t.equal(r.ok && r.event.timestamp, expected, name);
  }
});
