// The timeline beside the recording player (src/console/app/lib/recording-timeline.ts).
import t from 'tap';
import { consoleErrorItems, eventItem, timeline, timelineClock } from '../../src/console/app/lib/recording-timeline.js';

const at = (ms: number) => new Date(Date.UTC(2026, 11, 2, 10, 0, 0) + ms).toISOString();

t.test('each kind of event gets its label', async (t) => {
  t.match(eventItem({ id: 'a', event: '$pageview', timestamp: at(0), properties: { $current_url: 'https://shop.test/cart?step=2' } }), { kind: 'pageview', label: 'Pageview /cart?step=2' });
  t.match(eventItem({ id: 'b', event: '$pageview', timestamp: at(0), properties: { $current_url: 'not a url' } }), { label: 'Pageview not a url' }, 'an unparsable URL as sent');
  t.match(eventItem({ id: 'c', event: '$screen', timestamp: at(0), properties: { $screen_name: 'Checkout' } }), { kind: 'pageview', label: 'Screen Checkout' });
  t.match(eventItem({ id: 'd', event: '$autocapture', timestamp: at(0), properties: { $event_type: 'click', $el_text: 'Pay' } }), { kind: 'click', label: 'Clicked Pay' });
  t.match(eventItem({ id: 'e', event: '$autocapture', timestamp: at(0), properties: { $event_type: 'submit' }, elements: [{ tag_name: 'form' }] }), { label: 'submit <form>' }, 'no text: the element');
  t.match(eventItem({ id: 'f', event: '$exception', timestamp: at(0), properties: { $exception_list: [{ type: 'TypeError', value: 'x is undefined' }] } }), { kind: 'exception', label: 'TypeError: x is undefined' });
  t.match(eventItem({ id: 'g', event: 'checkout started', timestamp: at(0), properties: {} }), { kind: 'event', label: 'checkout started' });
});

t.test('console errors from the recorder, not its warnings or logs', async (t) => {
  const items = consoleErrorItems([
    { type: 6, timestamp: 5, data: { plugin: 'rrweb/console@1', payload: { level: 'error', payload: ['"Payment failed"', '{"code":402}'] } } },
    { type: 6, timestamp: 6, data: { plugin: 'rrweb/console@1', payload: { level: 'warn', payload: ['"slow"'] } } },
    { type: 6, timestamp: 7, data: { plugin: 'rrweb/network@1', payload: {} } },
    { type: 3, timestamp: 8, data: { source: 1 } },
  ]);
  t.same(items.map((i) => [i.at, i.label]), [[5, 'Console error Payment failed {"code":402}']]);
});

t.test('in time order, without the recorder\'s own events and with no unparsable time', async (t) => {
  const items = timeline([
    { id: 'late', event: 'late', timestamp: at(3_000), properties: {} },
    { id: 'snap', event: '$snapshot', timestamp: at(1_000), properties: {} },
    { id: 'early', event: 'early', timestamp: at(1_000), properties: {} },
    { id: 'bad', event: 'bad', timestamp: 'yesterday', properties: {} },
  ], [{ key: 'c', at: Date.parse(at(2_000)), kind: 'console-error', label: 'Console error' }]);
  t.same(items.map((i) => i.key), ['early', 'c', 'late']);
});

t.test('the clock', async (t) => {
  t.equal(timelineClock(0), '0:00');
  t.equal(timelineClock(61_999), '1:01');
  t.equal(timelineClock(-3_000), '-0:03', 'an event stamped before the first frame');
  t.equal(timelineClock(3_600_000), '60:00');
});
