import t from 'tap';
import {
  decodeLogRecord, decodePayload, encodeLogRecord, eventsOf, normalizeEvent, recordUuid,
  type NormalizeContext, type NormalizedEvent, type RecordUuid,
} from '../../src/domain/ingest/index.js';

/** What the capture path does: decode, normalise, record; returns the acknowledged events and the record. */
function receive(body: string, team: number, ctx: NormalizeContext): { events: NormalizedEvent[]; record: Buffer } {
  const decoded = decodePayload({ body: Buffer.from(body), query: {}, contentType: 'application/json', contentEncoding: '', method: 'POST' }, 1 << 20);
  if (!decoded.ok) throw new Error(decoded.detail);
  const events: NormalizedEvent[] = [];
  const uuids: RecordUuid[] = [];
  for (const raw of eventsOf(decoded.payload)) {
    const outcome = normalizeEvent(raw, ctx);
    uuids.push(recordUuid(outcome.ok ? outcome.event : null, raw));
    if (outcome.ok) events.push(outcome.event);
  }
  // The wire and the log see a copy: normalisation mutated the parsed objects, never the text.
  return { events: structuredClone(events), record: encodeLogRecord(team, ctx, uuids, decoded.text) };
}

const CLIENT = '0190163D-8694-739B-AADC-0EA0A8C2E3F3';

t.test('a record gives back exactly the events that were acknowledged', async (t) => {
  const ctx: NormalizeContext = { now: Date.parse('2026-11-22T12:00:00Z'), sentAt: Date.parse('2026-11-22T11:59:58Z'), ip: '10.1.2.3' };
  const body = JSON.stringify({
    api_key: 'phc_x',
    sent_at: '2026-11-22T11:59:58Z',
    batch: [
      { event: 'kept uuid', distinct_id: 'a', uuid: CLIENT, timestamp: '2026-11-22T11:59:50Z', properties: { x: 1 } },
      { event: 'generated uuid', distinct_id: 'b', properties: { $set: { plan: 'pro' } }, $set_once: { first: 1 } },
      { event: 'nil uuid', distinct_id: 'c', uuid: '00000000-0000-0000-0000-000000000000' },
      { event: 'no distinct id', properties: {} },
      { distinct_id: 'no name' },
      { event: '$autocapture', distinct_id: 'd', properties: { $elements: [{ tag_name: 'a', text: 'Go', attr__href: '/x' }] } },
      { event: 'unicode ✓ "quoted"', distinct_id: 'é', offset: 1500, properties: { nested: { deep: [1, 'two', null] } } },
    ],
  });
  const { events, record } = receive(body, 7, ctx);
  t.equal(events.length, 5, 'two events skipped at receive');
  const back = decodeLogRecord(record);
  t.equal(back.team, 7);
  t.equal(back.receivedAt, ctx.now, 'and when it was received');
  t.same(back.events, events, 'same events, same uuids, same times and properties');
  t.equal(back.events[0]!.uuid, CLIENT.toLowerCase());
  t.not(back.events[1]!.uuid, back.events[2]!.uuid);
  t.ok(record.length < Buffer.byteLength(body) + 400, 'client uuids are not repeated in the header');
  const onlyB = decodeLogRecord(record, (team, distinctId) => team === 7 && distinctId === 'b');
  t.same(onlyB.events, events.filter((e) => e.distinct_id === 'b'), 'a shard can take just the events it owns');
});

t.test('/engage/ single objects and bodies with NaN tokens', async (t) => {
  const engage = receive('{"distinct_id":"p","$set":{"email":"p@example.com"}}', 3, { now: 1_700_000_000_000, sentAt: null, ip: null, engage: true });
  t.same(decodeLogRecord(engage.record).events, engage.events);
  t.equal(engage.events[0]!.event, '$identify');
  const nan = receive('{"event":"e","distinct_id":"n","properties":{"v":NaN,"w":-Infinity}}', 3, { now: 1_700_000_000_000, sentAt: null, ip: null });
  t.same(decodeLogRecord(nan.record).events, nan.events);
  t.equal(nan.events[0]!.properties['v'], null);
});

t.test('records of the first format (normalised events) still read', async (t) => {
  const e: NormalizedEvent[] = [{ uuid: CLIENT.toLowerCase(), event: 'old', distinct_id: 'o', properties: { a: 1 }, timestamp: '2026-01-01T00:00:00.000Z', elements_chain: '' } as NormalizedEvent];
  const back = decodeLogRecord(Buffer.from(JSON.stringify({ t: 9, e })));
  t.same({ team: back.team, events: back.events }, { team: 9, events: e });
  t.ok(Number.isNaN(back.receivedAt), 'they carry no receive time');
});
