import t from 'tap';
import { applyPersonUpdates, personProfileMode, personUpdatesOf, type NormalizedEvent } from '../../src/domain/ingest/index.js';
import { mergeProperties } from '../../src/domain/merge-properties.js';

function ev(event: string, properties: Record<string, unknown>): NormalizedEvent {
  return { uuid: '0190163d-8694-739b-aadc-0ea0a8c2e3f3', event, distinct_id: 'd', properties, timestamp: '2024-06-15T12:00:00.000Z', elements_chain: '' };
}

t.test('personUpdatesOf: explicit $set / $set_once / $unset', async (t) => {
  const cases: [string, Record<string, unknown>, unknown][] = [
    ['nothing', { foo: 1 }, { set: {}, setOnce: {}, unset: [] }],
    ['$set and $set_once', { $set: { a: 1 }, $set_once: { b: 2 } }, { set: { a: 1 }, setOnce: { b: 2 }, unset: [] }],
    ['$unset as list', { $unset: ['a', 'b', 3] }, { set: {}, setOnce: {}, unset: ['a', 'b'] }],
    ['$unset as object (keys used)', { $unset: { a: null, b: 1 } }, { set: {}, setOnce: {}, unset: ['a', 'b'] }],
    ['$unset as lone string', { $unset: 'a' }, { set: {}, setOnce: {}, unset: ['a'] }],
    ['non-object $set ignored', { $set: 'x', $set_once: [1] }, { set: {}, setOnce: {}, unset: [] }],
  ];
  for (const [name, props, expected] of cases) t.same(personUpdatesOf(ev('e', props)), expected, name);
});

t.test('personUpdatesOf: initial / UTM injection (§2.6)', async (t) => {
  t.same(
    personUpdatesOf(ev('$pageview', { $browser: 'Chrome', $current_url: 'https://x.test/', utm_source: 'news', gclid: 'g1', $app_version: '1.2', other: 'no' })),
    {
      set: { $browser: 'Chrome', $current_url: 'https://x.test/', $app_version: '1.2', utm_source: 'news', gclid: 'g1' },
      setOnce: { $initial_browser: 'Chrome', $initial_current_url: 'https://x.test/', $initial_app_version: '1.2', $initial_utm_source: 'news', $initial_gclid: 'g1' },
      unset: [],
    },
    'web, mobile and campaign keys lifted',
  );

  const explicit = personUpdatesOf(
    ev('$pageview', { $browser: 'Chrome', utm_source: 'news', $set: { $browser: 'Mine' }, $set_once: { $initial_utm_source: 'first' } }),
  );
  t.equal(explicit.set.$browser, 'Mine', 'explicit $set wins');
  t.equal(explicit.setOnce.$initial_utm_source, 'first', 'explicit $set_once wins');
  t.equal(explicit.setOnce.$initial_browser, 'Chrome');

  const osName = personUpdatesOf(ev('e', { $os_name: 'iOS', $os_version: '17' }));
  t.same([osName.set.$os, osName.setOnce.$initial_os, osName.set.$os_version], ['iOS', 'iOS', '17'], '$os_name is a fallback for $os');
  t.equal(personUpdatesOf(ev('e', { $os: 'Linux', $os_name: 'iOS' })).set.$os, 'Linux', '$os wins over $os_name');

  const server = personUpdatesOf(ev('e', { $is_server: true, $os: 'Linux', $os_version: '6', utm_source: 's' }));
  t.same(server.set, { utm_source: 's' }, 'server SDKs do not lift $os/$os_version');

  t.same(personUpdatesOf(ev('e', { $referrer: null })).set, { $referrer: null }, 'null values are lifted too');

  for (const skipped of ['$snapshot', '$performance_event']) {
    t.same(personUpdatesOf(ev(skipped, { $browser: 'Chrome', $set: { a: 1 } })), { set: { a: 1 }, setOnce: {}, unset: [] }, `${skipped}: no injection`);
  }
});

t.test('personUpdatesOf does not modify the event', async (t) => {
  const props = { $browser: 'Chrome', $set: { a: 1 } };
  personUpdatesOf(ev('e', props));
  t.same(props, { $browser: 'Chrome', $set: { a: 1 } });
});

t.test('applyPersonUpdates: $set_once → $set → $unset (§2.5)', async (t) => {
  type U = { set?: Record<string, unknown>; setOnce?: Record<string, unknown>; unset?: string[] };
  const cases: [string, Record<string, unknown>, U, Record<string, unknown>, boolean][] = [
    ['$set_once only sets absent keys', { a: 1, n: null }, { setOnce: { a: 2, b: 3, n: 4 } }, { a: 1, n: null, b: 3 }, true],
    ['$set overwrites', { a: 1 }, { set: { a: 2, b: 3 } }, { a: 2, b: 3 }, true],
    ['$set_once then $set on the same key: $set wins', {}, { setOnce: { a: 'once' }, set: { a: 'set' } }, { a: 'set' }, true],
    ['$unset last (after $set)', { a: 1 }, { set: { b: 2 }, unset: ['a', 'b'] }, {}, true],
    ['unset of a missing key is no change', { a: 1 }, { unset: ['zzz'] }, { a: 1 }, false],
    ['equal scalar $set is no change', { a: 1 }, { set: { a: 1 } }, { a: 1 }, false],
    ['deep-equal object $set is no change', { a: { x: [1, { y: 2 }] } }, { set: { a: { x: [1, { y: 2 }] } } }, { a: { x: [1, { y: 2 }] } }, false],
    ['different nested value is a change', { a: { x: 1 } }, { set: { a: { x: 2 } } }, { a: { x: 2 } }, true],
    ['prototype-named keys are ordinary properties', {}, { setOnce: { toString: 'x' }, set: { constructor: 'y' } }, { toString: 'x', constructor: 'y' }, true],
  ];
  for (const [name, before, u, after, changed] of cases) {
    const snapshot = structuredClone(before);
    const r = applyPersonUpdates(before, { set: u.set ?? {}, setOnce: u.setOnce ?? {}, unset: u.unset ?? [] });
    t.same(r.properties, after, `${name}: result`);
    t.equal(r.changed, changed, `${name}: changed`);
    t.same(before, snapshot, `${name}: input untouched`);
    if (!changed) t.equal(r.properties, before, `${name}: same reference when unchanged`);
    else t.not(r.properties, before, `${name}: new object when changed`);
  }
});

t.test('a JSON "__proto__" key cannot swap prototypes', async (t) => {
  const payload = JSON.parse('{"$set": {"__proto__": {"polluted": true}, "ok": 1}}') as Record<string, unknown>;
  const u = personUpdatesOf(ev('e', payload));
  const r = applyPersonUpdates({}, u);
  t.same(r.properties, { ok: 1 });
  t.equal(Object.getPrototypeOf(r.properties), Object.prototype);
  t.equal((r.properties as Record<string, unknown>).polluted, undefined);
});

t.test('personProfileMode (§2.9)', async (t) => {
  const cases: [string, string, unknown, string][] = [
    ['absent', '$pageview', undefined, 'process'],
    ['true', '$pageview', true, 'process'],
    ['false on a normal event', '$pageview', false, 'skip_person'],
    ['string "false" is not boolean false', '$pageview', 'false', 'process'],
    ['0 is not boolean false', '$pageview', 0, 'process'],
    ['$identify with false', '$identify', false, 'drop_event'],
    ['$create_alias with false', '$create_alias', false, 'drop_event'],
    ['$merge_dangerously with false', '$merge_dangerously', false, 'drop_event'],
    ['$groupidentify with false', '$groupidentify', false, 'drop_event'],
    ['$identify with true', '$identify', true, 'process'],
  ];
  for (const [name, event, value, mode] of cases) {
    const props = value === undefined ? {} : { $process_person_profile: value };
    t.equal(personProfileMode(ev(event, props)), mode, name);
  }
});

t.test('mergeProperties equals an object spread of its layers, own "__proto__" keys included', async (t) => {
  const layers: Record<string, unknown>[][] = [
    [{ a: 1, b: 2 }, { b: 3, c: 4 }],
    [{}, { x: null }],
    [{ a: 1 }],
    [{ toString: 'x', constructor: 1 }, { hasOwnProperty: true }],
    [JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'), { b: 2 }],
    [{ a: 1 }, JSON.parse('{"__proto__": 5, "a": 2}')],
  ];
  for (const l of layers) {
    const merged = mergeProperties(...l);
    const spread = l.reduce<Record<string, unknown>>((m, x) => ({ ...m, ...x }), {});
    t.same(Object.entries(merged), Object.entries(spread), JSON.stringify(l));
    t.equal(Object.getPrototypeOf(merged), Object.prototype, 'plain prototype');
    t.equal((merged as Record<string, unknown>).polluted, undefined, 'no prototype swapped in');
    t.ok(l.every((x) => x !== merged), 'a new object');
  }
  const base = { a: 1 };
  const r = applyPersonUpdates(base, { set: { fresh: 1 }, setOnce: {}, unset: [] });
  t.same(r.properties, { a: 1, fresh: 1 });
  t.same(base, { a: 1 }, 'input untouched when keys are added');
});
