// The pure pieces of session recordings: the metadata fold (counts, first URL, duration and PostHog's active time),
// what a /s/ request holds, the list's parameters, and the project settings and the remote config they give.
import t from 'tap';
import { activeMs, durations, foldChunk, type ChunkFacts, type SessionMetadata } from '../../src/domain/recordings/metadata.js';
import { chunkLines, snapshotItemsOf } from '../../src/domain/recordings/snapshot-items.js';
import { comparator, parseRecordingsQuery, selects } from '../../src/domain/recordings/list-query.js';
import { applyRecordingSettings, DEFAULT_RECORDING_SETTINGS, recordingSettingsOf, serializeRecordingSettings, sessionRecordingConfig, sessionRecordingMember } from '../../src/domain/recordings/settings.js';
import { recordingView } from '../../src/domain/recordings/view.js';
import { AnalyticsInputError } from '../../src/domain/analytics/errors.js';
import type { RrwebEvent } from '../../src/domain/recordings/rrweb.js';

const T0 = Date.parse('2026-11-30T10:00:00Z');

// rrweb events by what they are (type 3 = IncrementalSnapshot; its `source` and a MouseInteraction's `type`).
const meta = (t: number, href: string): RrwebEvent => ({ type: 4, timestamp: T0 + t, data: { href, width: 1280, height: 720 } });
const full = (t: number): RrwebEvent => ({ type: 2, timestamp: T0 + t, data: 'gzipped-by-the-sdk', cv: '2024-10' } as RrwebEvent);
const mutation = (t: number): RrwebEvent => ({ type: 3, timestamp: T0 + t, data: { source: 0, adds: 'x', removes: 'y', texts: 'z', attributes: 'w' } });
const move = (t: number): RrwebEvent => ({ type: 3, timestamp: T0 + t, data: { source: 1, positions: [{ x: 1, y: 2, id: 3, timeOffset: 0 }] } });
const mouse = (t: number, type: number): RrwebEvent => ({ type: 3, timestamp: T0 + t, data: { source: 2, type, id: 7, x: 10, y: 10 } });
const click = (t: number) => mouse(t, 2);
const input = (t: number): RrwebEvent => ({ type: 3, timestamp: T0 + t, data: { source: 5, text: '*****', isChecked: false, id: 9 } });
const scroll = (t: number): RrwebEvent => ({ type: 3, timestamp: T0 + t, data: { source: 3, id: 1, x: 0, y: 100 } });
const consoleLine = (t: number, level: string): RrwebEvent =>
  ({ type: 6, timestamp: T0 + t, data: { plugin: 'rrweb/console@1', payload: { level, payload: ['"hi"'], trace: [] } } });

function chunk(events: RrwebEvent[], extra: Partial<ChunkFacts> = {}): ChunkFacts {
  return { events, windowId: 'w1', distinctId: 'user-1', lib: 'web', receivedMs: T0 + 60_000, snapshotBytes: 100, storedBytes: 20, ...extra };
}

const fold = (...chunks: ChunkFacts[]): SessionMetadata =>
  chunks.reduce<SessionMetadata | undefined>((m, c) => foldChunk(m, 1, 'session-1', c), undefined)!;

t.test('counts: clicks (click, double click, touch end), keypresses (inputs), mouse activity, console levels', async (t) => {
  const m = fold(chunk([
    meta(0, 'https://shop.test/'), full(1), click(100), mouse(200, 4), mouse(300, 9), mouse(400, 0), mouse(500, 1),
    move(600), input(700), input(800), scroll(900), mutation(950),
    consoleLine(1000, 'log'), consoleLine(1100, 'info'), consoleLine(1200, 'warn'), consoleLine(1300, 'error'), consoleLine(1400, 'assert'),
    { type: 6, timestamp: T0 + 1500, data: { plugin: 'rrweb/network@1', payload: {} } },
  ]));
  t.match(m, {
    clicks: 3, keypresses: 2, mouseActivity: 6, consoleLog: 2, consoleWarn: 1, consoleError: 2,
    firstUrl: 'https://shop.test/', startMs: T0, endMs: T0 + 1500, events: 18, chunks: 1, windows: ['w1'], distinctId: 'user-1', lib: 'web',
  });
});

t.test('first URL: the earliest Meta event, whichever chunk brings it', async (t) => {
  const m = fold(chunk([meta(5_000, 'https://shop.test/cart'), click(5_100)]), chunk([meta(1_000, 'https://shop.test/')], { windowId: 'w2' }));
  t.equal(m.firstUrl, 'https://shop.test/');
  t.same(m.windows, ['w1', 'w2']);
  t.equal(m.startMs, T0 + 1_000);
});

t.test("active time: PostHog's segmentation (5 s threshold, inactive events extend an active segment, 1 ms minimum)", async (t) => {
  const cases: [string, RrwebEvent[], number][] = [
    ['no active event', [meta(0, 'u'), full(1), mutation(10_000)], 0],
    ['one active event counts 1 ms', [meta(0, 'u'), click(1_000)], 1],
    // active 0..2000, a mutation at 3000 is within 5 s of the last active one and extends the segment to 3000;
    // a mutation at 9000 (7 s later) closes it; an active event at 20 s opens another, extended to 21 s.
    ['two segments', [click(0), move(1_000), scroll(2_000), mutation(3_000), mutation(9_000), input(20_000), mutation(21_000)], 3_000 + 1_000],
    ['a gap of exactly 5 s keeps the segment', [click(0), click(5_000)], 5_000],
    ['a gap over 5 s splits it', [click(0), click(5_001)], 1 + 1],
  ];
  for (const [name, events, expected] of cases) t.equal(activeMs(fold(chunk(events)).activity), expected, name);
});

t.test('folding chunk by chunk gives what one chunk of all the events gives', async (t) => {
  const events = [meta(0, 'https://a.test/'), full(1), click(500), move(1_500), mutation(4_000), input(9_500), consoleLine(9_600, 'error'), scroll(30_000), click(31_000)];
  const whole = fold(chunk(events));
  const parts = fold(chunk(events.slice(0, 3)), chunk(events.slice(3, 5)), chunk(events.slice(5)));
  const strip = (m: SessionMetadata) => ({ ...m, chunks: 0, snapshotBytes: 0, storedBytes: 0 });
  t.same(strip(parts), strip(whole));
  t.equal(parts.chunks, 3);
  t.equal(parts.storedBytes, 60);
  // Active segments: 500..4000 (the mutation at 4 s extends it), 9500..9600, 30000..31000: 4.6 s, rounded.
  t.same(durations(whole), { duration: 31, active: 5, inactive: 26 });
});

t.test('a late chunk older than what was folded counts, but not for active time; events are sorted within a chunk', async (t) => {
  const m = fold(chunk([click(10_000), click(11_000)]), chunk([click(1_000), input(2_000)], { windowId: 'w2' }));
  t.equal(m.clicks, 3);
  t.equal(m.keypresses, 1);
  t.equal(activeMs(m.activity), 1_000, 'the late chunk did not change the active time');
  t.equal(m.startMs, T0 + 1_000);
  const unsorted = fold(chunk([click(2_000), click(0), click(1_000)]));
  t.equal(activeMs(unsorted.activity), 2_000);
});

t.test('the fold does not change the record it starts from', async (t) => {
  const first = fold(chunk([click(0), click(1_000)]));
  const copy = JSON.parse(JSON.stringify(first));
  foldChunk(first, 1, 'session-1', chunk([click(2_000), meta(3_000, 'x')], { windowId: 'w9' }));
  t.same(JSON.parse(JSON.stringify(first)), copy);
});

t.test('what a /s/ request holds: $snapshot events, their session, window, distinct id and rrweb events', async (t) => {
  const uuid = '0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee';
  const { items, dropped } = snapshotItemsOf([
    { event: '$snapshot', uuid, properties: { $session_id: 's1', $window_id: 'w1', distinct_id: 'd1', $lib: 'web', $snapshot_data: [click(0), { nope: 1 }, meta(1, 'u')] } },
    { event: '$snapshot', properties: { $session_id: 's2', distinct_id: 42, $snapshot_data: meta(0, 'single object, older SDKs') } },
    { event: '$snapshot', distinct_id: 'd3', properties: { $session_id: 's3', $snapshot_items: [click(5)] } },
    { event: '$pageview', properties: { $session_id: 's1', distinct_id: 'd1' } },
    { event: '$snapshot', properties: { distinct_id: 'd1', $snapshot_data: [click(0)] } },
    { event: '$snapshot', properties: { $session_id: 's1', $snapshot_data: [click(0)] } },
    { event: '$snapshot', properties: { $session_id: 's1', distinct_id: 'd1', $snapshot_data: [] } },
  ]);
  t.same(items.map((i) => [i.sessionId, i.windowId, i.distinctId, i.uuid, i.events.length, i.lib]), [
    ['s1', 'w1', 'd1', uuid, 2, 'web'],
    ['s2', null, '42', null, 1, null],
    ['s3', null, 'd3', null, 1, null],
  ]);
  t.same(Object.fromEntries(dropped), { invalid_rrweb_event: 1, not_a_snapshot: 1, missing_session_id: 1, missing_distinct_id: 1, no_snapshot_data: 1 });
  t.same(snapshotItemsOf({ api_key: 'k', batch: [{ event: '$snapshot', properties: { $session_id: 'b', distinct_id: 'd', $snapshot_data: [click(0)] } }] }).items.length, 1, 'a batch envelope');
  const lines = chunkLines(items[0]!).split('\n');
  t.equal(lines.length, 3, 'one line per event, each ending in a newline');
  t.same(JSON.parse(lines[0]!), ['w1', click(0)]);
  t.equal(lines[2], '');
});

t.test("the list's parameters: dates, person, duration predicates, order and pages", async (t) => {
  const now = T0 + 86_400_000;
  const parse = (q: Record<string, string>) => parseRecordingsQuery(q, now, (raw) => (raw === '-2d' ? now - 2 * 86_400_000 : Number.isNaN(Date.parse(raw)) ? null : Date.parse(raw)));
  const short = fold(chunk([meta(0, 'a'), click(1_000)]));
  const long = { ...fold(chunk([meta(0, 'b'), click(1_000), click(90_000)])), sessionId: 'session-2', distinctId: 'user-2' };
  const old = { ...fold(chunk([meta(-5 * 86_400_000, 'c')])), sessionId: 'session-3' };
  const pick = (q: Record<string, string>, ids: ReadonlySet<string> | null = null) => {
    const query = parse(q);
    return [short, long, old].filter((m) => selects(query, m, ids)).sort(comparator(query)).map((m) => m.sessionId);
  };
  t.same(pick({}), ['session-1', 'session-2'], 'the default window is the last 3 days (ties by session id)');
  t.same(pick({ date_from: '-2d' }), ['session-1', 'session-2']);
  t.same(pick({ date_from: '2000-01-01' }).length, 3);
  t.same(pick({ having_predicates: JSON.stringify([{ key: 'duration', operator: 'gt', value: 60, type: 'recording' }]) }), ['session-2']);
  t.same(pick({ session_recording_duration: JSON.stringify({ key: 'duration', operator: 'lt', value: 60 }) }), ['session-1']);
  t.same(pick({ order: 'duration' }), ['session-2', 'session-1']);
  t.same(pick({ order: 'duration', order_direction: 'ASC' }), ['session-1', 'session-2']);
  t.same(pick({ distinct_id: 'user-2' }), ['session-2']);
  t.same(pick({}, new Set(['user-1'])), ['session-1'], 'a person filter: the distinct ids the caller resolved');
  t.same(pick({ session_ids: '["session-3"]' }), ['session-3'], 'explicit ids are not bounded by the default window');
  t.match(parse({ limit: '5000', offset: '10' }), { limit: 1000, offset: 10 });
  const bads: Record<string, string>[] = [{ date_from: 'soon' }, { order: 'name' }, { having_predicates: '[{"key":"start_time"}]' }, { having_predicates: 'x' }, { limit: '-1' }];
  for (const bad of bads) {
    let refused: unknown = null;
    try {
      parse(bad);
    } catch (error) {
      refused = error;
    }
    t.ok(refused instanceof AnalyticsInputError && refused.attr === Object.keys(bad)[0], `${JSON.stringify(bad)} is refused, naming the parameter`);
  }
});

t.test('project settings: defaults, PATCH fields, validation, and the sessionRecording config posthog-js reads', async (t) => {
  t.same(recordingSettingsOf(undefined), DEFAULT_RECORDING_SETTINGS);
  t.equal(sessionRecordingConfig(DEFAULT_RECORDING_SETTINGS), false, 'off by default');
  t.equal(sessionRecordingMember(undefined), '"sessionRecording":false');
  const on = applyRecordingSettings(DEFAULT_RECORDING_SETTINGS, {
    session_recording_opt_in: true, session_recording_sample_rate: '0.5', session_recording_minimum_duration_milliseconds: 2000,
    session_recording_linked_flag: { id: 3, key: 'beta', variant: 'test' }, capture_console_log_opt_in: false,
    session_recording_network_payload_capture_config: { recordHeaders: true }, session_recording_masking_config: { maskAllInputs: false, blockSelector: '.secret' },
    recording_retention_days: 7, name: 'ignored here',
  });
  t.same(serializeRecordingSettings(on), {
    session_recording_opt_in: true, session_recording_sample_rate: '0.50', session_recording_minimum_duration_milliseconds: 2000,
    session_recording_linked_flag: { id: 3, key: 'beta', variant: 'test' }, capture_console_log_opt_in: false,
    session_recording_network_payload_capture_config: { recordHeaders: true, recordBody: false },
    session_recording_masking_config: { maskAllInputs: false, blockSelector: '.secret' }, session_replay_config: { record_canvas: false },
    recording_retention_days: 7, session_recording_retention_period: null,
  });
  t.equal(applyRecordingSettings(on, { session_recording_retention_period: '90d' }).retentionDays, 90, "PostHog's retention period is read as days");
  t.equal(serializeRecordingSettings(DEFAULT_RECORDING_SETTINGS).session_recording_retention_period, '30d');
  t.same(sessionRecordingConfig(on), {
    endpoint: '/s/', consoleLogRecordingEnabled: false, recorderVersion: 'v2', sampleRate: '0.50', minimumDurationMilliseconds: 2000,
    linkedFlag: { flag: 'beta', variant: 'test' }, networkPayloadCapture: { recordHeaders: true, recordBody: false },
    masking: { maskAllInputs: false, blockSelector: '.secret' }, urlTriggers: [], urlBlocklist: [], eventTriggers: [],
    recordCanvas: false, canvasFps: null, canvasQuality: null,
  });
  const plain = applyRecordingSettings(DEFAULT_RECORDING_SETTINGS, { session_recording_opt_in: true, session_recording_sample_rate: 1 });
  t.match(sessionRecordingConfig(plain), { sampleRate: null, masking: null, linkedFlag: null, consoleLogRecordingEnabled: true, minimumDurationMilliseconds: null },
    'a rate of 1 is sent as null, masking left to posthog-js (every input masked), console on');
  t.same(JSON.parse(`{${sessionRecordingMember(plain)}}`).sessionRecording, sessionRecordingConfig(plain));
  t.match(sessionRecordingConfig(applyRecordingSettings(plain, { session_recording_linked_flag: { key: 'beta' } })), { linkedFlag: 'beta' });
  for (const [field, value] of [
    ['session_recording_opt_in', 'yes'], ['session_recording_sample_rate', 1.5], ['session_recording_sample_rate', '0.123'],
    ['session_recording_minimum_duration_milliseconds', 60_000], ['session_recording_linked_flag', { id: 1 }],
    ['session_recording_masking_config', 'all'], ['session_replay_config', { record_canvas: 'no' }], ['recording_retention_days', 0],
    ['session_recording_retention_period', '7d'],
  ] as const) {
    let refused: unknown = null;
    try {
      applyRecordingSettings(DEFAULT_RECORDING_SETTINGS, { [field]: value });
    } catch (error) {
      refused = error;
    }
    t.ok(refused instanceof AnalyticsInputError && refused.attr === field, `${field}: ${JSON.stringify(value)} is refused, naming the field`);
  }
});

t.test("a recording as the API answers it (PostHog's serializer fields)", async (t) => {
  const m = fold(chunk([meta(0, 'https://shop.test/'), click(1_000), input(2_000), consoleLine(3_000, 'error'), mutation(62_000)]));
  const view = recordingView(m, { now: T0 + 86_400_000, person: null, viewed: true, retentionDays: 30 });
  t.match(view, {
    id: 'session-1', distinct_id: 'user-1', viewed: true, recording_duration: 62, active_seconds: 2, inactive_seconds: 60,
    start_time: '2026-11-30T10:00:00.000Z', end_time: '2026-11-30T10:01:02.000Z', click_count: 1, keypress_count: 1,
    console_error_count: 1, start_url: 'https://shop.test/', person: null, retention_period_days: 30,
    expiry_time: '2026-12-30T10:00:00.000Z', recording_ttl: 29, snapshot_source: 'web', ongoing: false,
  });
});
