// GeoIP at ingestion over HTTP: an event's location comes from the client address recorded as `$ip` (from
// X-Forwarded-For only behind a proxy: a loopback peer's last entry, or the first with QUILL_TRUST_PROXY), lands on
// the event and on the person (`$geoip_…` set, `$initial_geoip_…` set once); `$geoip_disable` and private addresses
// get none; QUILL_GEOIP=0 turns it off; and the Country table of web analytics reads it.
import t from 'tap';
import { event, personOf, storedEvents } from '../helpers/ingest.js';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const on = quillForFile(t);
const trusting = quillForFile(t, { env: { QUILL_TRUST_PROXY: '1' } });
const off = quillForFile(t, { env: { QUILL_GEOIP: '0' } });

async function capture(base: string, forwardedFor: string, ev: object): Promise<void> {
  const res = await fetch(`${base}/batch/`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor }, body: JSON.stringify({ api_key: PROJECT_KEY, batch: [ev] }),
  });
  if (res.status !== 200) throw new Error(`batch: ${res.status}`);
}

t.test('location from the client address, on the event and the person', async (t) => {
  // From a loopback peer (a proxy on this host), the proxy's own entry is the last one.
  await capture(on.q.base, '203.0.113.77, 8.8.8.8', event('geo-a', '$pageview', { $session_id: 's1', $current_url: 'https://x.test/' }));
  const [stored] = await storedEvents(on.api, 'geo-a');
  t.match(stored.properties, { $ip: '8.8.8.8', $geoip_country_code: 'US', $geoip_country_name: 'United States' });
  const person = await personOf(on.api, 'geo-a');
  t.match(person.properties, { $geoip_country_code: 'US', $initial_geoip_country_code: 'US' });

  await capture(on.q.base, '8.8.8.8', event('geo-b', 'custom', { $geoip_disable: true }));
  await capture(on.q.base, '10.1.2.3', event('geo-c', 'custom'));
  for (const id of ['geo-b', 'geo-c']) {
    const [e] = await storedEvents(on.api, id);
    t.notOk('$geoip_country_code' in e.properties, `${id}: no location`);
  }
  const table = await on.api.post('/api/projects/@current/query/', { query: { kind: 'WebStatsTableQuery', breakdownBy: 'Country', properties: [], dateRange: { date_from: '-1d' } } });
  t.same(table.body.results.map((r: any[]) => [r[0], r[1][0]]), [['US', 1]], 'the Country table');
});

t.test('QUILL_TRUST_PROXY: the first entry is the client', async (t) => {
  await capture(trusting.q.base, '81.2.69.160, 10.0.0.1', event('geo-d', 'custom'));
  const [e] = await storedEvents(trusting.api, 'geo-d');
  t.match(e.properties, { $ip: '81.2.69.160', $geoip_country_code: 'GB' });
});

t.test('QUILL_GEOIP=0', async (t) => {
  await capture(off.q.base, '8.8.8.8', event('geo-e', 'custom'));
  const [e] = await storedEvents(off.api, 'geo-e');
  t.equal(e.properties.$ip, '8.8.8.8');
  t.notOk('$geoip_country_code' in e.properties);
});
