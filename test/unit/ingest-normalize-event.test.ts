import t from 'tap';
import { isUuid, normalizeEvent, type NormalizeContext, type NormalizedEvent } from '../../src/domain/ingest/index.js';

const NOW = Date.UTC(2024, 5, 15, 12);
const ctx: NormalizeContext = { now: NOW, sentAt: null, ip: '203.0.113.9' };

function ok(raw: unknown, c: Partial<NormalizeContext> = {}): NormalizedEvent {
  const r = normalizeEvent(raw, { ...ctx, ...c });
  if (!r.ok) throw new Error(`unexpected skip: ${r.reason}`);
  return r.event;
}

t.test('skip reasons (the caller drops and counts the event: src/domain/ingest/accept-events.ts)', async (t) => {
  const cases: [string, unknown, string][] = [
    ['not an object: string', 'hello', 'not_an_object'],
    ['not an object: array', [{ event: 'x' }], 'not_an_object'],
    ['not an object: null', null, 'not_an_object'],
    ['missing event', { distinct_id: 'd' }, 'missing_event_name'],
    ['empty event', { event: '', distinct_id: 'd' }, 'missing_event_name'],
    ['null event', { event: null, distinct_id: 'd' }, 'missing_event_name'],
    ['missing distinct_id', { event: 'e', properties: {} }, 'missing_distinct_id'],
    ['empty distinct_id', { event: 'e', distinct_id: '' }, 'missing_distinct_id'],
    ['null distinct_id everywhere', { event: 'e', $distinct_id: null, distinct_id: null, properties: { distinct_id: null } }, 'missing_distinct_id'],
  ];
  for (const [name, raw, reason] of cases) {
    const r = normalizeEvent(raw, ctx);
    t.same(r.ok ? 'ok' : r.reason, reason, name);
  }
});

t.test('distinct_id sources, stringification, truncation (§1.5)', async (t) => {
  const long = 'x'.repeat(250);
  const emoji = '😀'.repeat(201); // 402 UTF-16 units, 201 code points
  const cases: [string, Record<string, unknown>, string][] = [
    ['top-level $distinct_id first', { $distinct_id: 'a', distinct_id: 'c', properties: { distinct_id: 'b' } }, 'a'],
    ['then properties.distinct_id', { distinct_id: 'c', properties: { distinct_id: 'b' } }, 'b'],
    ['then top-level distinct_id', { distinct_id: 'c', properties: {} }, 'c'],
    ['empty higher-priority sources are skipped', { $distinct_id: '', distinct_id: 'c', properties: { distinct_id: null } }, 'c'],
    ['number', { distinct_id: 23 }, '23'],
    ['float', { distinct_id: 1.5 }, '1.5'],
    ['zero is an id, not missing', { distinct_id: 0 }, '0'],
    ['boolean', { distinct_id: true }, 'true'],
    ['object → JSON', { distinct_id: { a: 1 } }, '{"a":1}'],
    ['array → JSON', { distinct_id: [1, 'b'] }, '[1,"b"]'],
    ['truncated to 200 chars', { distinct_id: long }, 'x'.repeat(200)],
    ['truncation counts code points and never splits a surrogate pair', { distinct_id: emoji }, '😀'.repeat(200)],
  ];
  for (const [name, raw, expected] of cases) t.equal(ok({ event: 'e', ...raw }).distinct_id, expected, name);
});

t.test('event name', async (t) => {
  const cases: [string, unknown, string][] = [
    ['string kept', '$pageview', '$pageview'],
    ['number JSON-stringified', 42, '42'],
    ['object JSON-stringified', { a: 1 }, '{"a":1}'],
    ['truncated to 200', 'e'.repeat(300), 'e'.repeat(200)],
  ];
  for (const [name, event, expected] of cases) t.equal(ok({ event, distinct_id: 'd' }).event, expected, name);
});

t.test('/engage/ forces $identify (single-object bodies)', async (t) => {
  const ev = ok({ $distinct_id: 'd', $token: 'phc', $set: { email: 'a@b.c' } }, { engage: true });
  t.equal(ev.event, '$identify');
  t.same(ev.properties.$set, { email: 'a@b.c' });
  t.equal(ok({ event: 'kept', distinct_id: 'd' }, { engage: false }).event, 'kept');
  t.equal(ok({ event: 'renamed', distinct_id: 'd' }, { engage: true }).event, '$identify');
});

t.test('uuid (§1.6): valid kept lower-cased, anything else regenerated', async (t) => {
  const v = '0190163D-8694-739B-AADC-0EA0A8C2E3F3';
  t.equal(ok({ event: 'e', distinct_id: 'd', uuid: v }).uuid, v.toLowerCase(), 'valid client uuid');
  for (const [name, uuid] of [
    ['missing', undefined],
    ['empty', ''],
    ['malformed', 'not-a-uuid'],
    ['number', 12],
    ['nil uuid', '00000000-0000-0000-0000-000000000000'],
  ] as [string, unknown][]) {
    const got = ok({ event: 'e', distinct_id: 'd', uuid }).uuid;
    t.ok(isUuid(got) && got[14] === '7' && got !== '00000000-0000-0000-0000-000000000000', `${name} → generated v7`);
  }
});

t.test('$set / $set_once placement (§1.8)', async (t) => {
  const ev = ok({
    event: 'e',
    distinct_id: 'd',
    $set: { a: 'top', b: 'top' },
    $set_once: { o: 'top' },
    properties: { $set: { b: 'inner', c: 'inner' }, $set_once: { o: 'inner', p: 'inner' } },
  });
  t.same(ev.properties.$set, { b: 'top', c: 'inner', a: 'top' }, 'merged, top-level wins');
  t.same(ev.properties.$set_once, { o: 'top', p: 'inner' }, 'merged, top-level wins');
  t.same(ok({ event: 'e', distinct_id: 'd', $set: { a: 1 } }).properties.$set, { a: 1 }, 'only top-level');
  t.same(ok({ event: 'e', distinct_id: 'd', properties: { $set: { a: 1 } } }).properties.$set, { a: 1 }, 'only inside properties');
  t.notOk('$set' in ok({ event: 'e', distinct_id: 'd', $set: 'junk' }).properties, 'non-object top-level $set ignored');
});

t.test('$ip from the request unless present', async (t) => {
  t.equal(ok({ event: 'e', distinct_id: 'd' }).properties.$ip, '203.0.113.9');
  t.equal(ok({ event: 'e', distinct_id: 'd', properties: { $ip: '10.0.0.1' } }).properties.$ip, '10.0.0.1');
  t.equal(ok({ event: 'e', distinct_id: 'd', properties: { $ip: '' } }).properties.$ip, '203.0.113.9', 'empty $ip replaced');
  t.notOk('$ip' in ok({ event: 'e', distinct_id: 'd' }, { ip: null }).properties, 'no ip, nothing added');
});

t.test('missing or non-object properties become {}', async (t) => {
  t.same(ok({ event: 'e', distinct_id: 'd' }, { ip: null }).properties, {});
  t.same(ok({ event: 'e', distinct_id: 'd', properties: ['x'] }, { ip: null }).properties, {});
  t.same(ok({ event: 'e', distinct_id: 'd', properties: 'x' }, { ip: null }).properties, {});
});

t.test('elements: $elements → chain, $elements_chain kept, both removed from properties', async (t) => {
  const elements = [{ tag_name: 'a', $el_text: 'Buy', attr__href: '/x', nth_child: 2, nth_of_type: 1 }];
  const fromElements = ok({ event: '$autocapture', distinct_id: 'd', properties: { $elements: elements, keep: 1 } });
  t.equal(fromElements.elements_chain, 'a:attr__href="/x"href="/x"nth-child="2"nth-of-type="1"text="Buy"');
  t.same(Object.keys(fromElements.properties).sort(), ['$ip', 'keep']);

  const sent = ok({ event: '$autocapture', distinct_id: 'd', properties: { $elements_chain: 'button:nth-child="0"nth-of-type="0"', $elements: elements } });
  t.equal(sent.elements_chain, 'button:nth-child="0"nth-of-type="0"', 'a sent chain wins over $elements');
  t.notOk('$elements_chain' in sent.properties || '$elements' in sent.properties);

  t.equal(ok({ event: 'e', distinct_id: 'd' }).elements_chain, '', 'no elements → ""');
});

t.test('$groups is left in place (mapping needs store state)', async (t) => {
  t.same(ok({ event: 'e', distinct_id: 'd', properties: { $groups: { company: 'acme' } } }).properties.$groups, { company: 'acme' });
});

t.test('the parsed properties object is reused, not cloned', async (t) => {
  const props = { a: 1 };
  t.equal(ok({ event: 'e', distinct_id: 'd', properties: props }).properties, props);
});

t.test('whole event shape', async (t) => {
  const ev = ok({
    uuid: '0190163d-8694-739b-aadc-0ea0a8c2e3f3',
    event: '$pageview',
    distinct_id: 'u1',
    timestamp: '2024-06-15T11:00:00.000Z',
    properties: { $current_url: 'https://x.test/' },
    type: 'capture', // Segment-style extras are dropped
  });
  t.same(ev, {
    uuid: '0190163d-8694-739b-aadc-0ea0a8c2e3f3',
    event: '$pageview',
    distinct_id: 'u1',
    properties: { $current_url: 'https://x.test/', $ip: '203.0.113.9' },
    timestamp: '2024-06-15T11:00:00.000Z',
    elements_chain: '',
  });
});
