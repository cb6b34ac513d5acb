// GeoIP enrichment at ingestion (src/domain/ingest/geoip.ts) and the bundled offline database
// (src/stores/geoip/geoip-database.ts).
import t from 'tap';
import { enrichWithGeo, geoProperties, isPublicAddress, locationOf } from '../../src/domain/ingest/geoip.js';
import { openGeoIpDatabase } from '../../src/stores/geoip/geoip-database.js';

const city = {
  city: { names: { en: 'Lyon' } }, continent: { code: 'EU', names: { en: 'Europe' } }, country: { iso_code: 'FR', names: { en: 'France' } },
  location: { latitude: 45.7, longitude: 4.8, time_zone: 'Europe/Paris', accuracy_radius: 20 }, postal: { code: '69001' },
  subdivisions: [{ iso_code: 'ARA', names: { en: 'Auvergne-Rhone-Alpes' } }, { iso_code: '69', names: { en: 'Rhone' } }],
};

t.test('records of both shapes become $geoip_ properties', async (t) => {
  t.same(geoProperties(locationOf(city)!), {
    $geoip_country_code: 'FR', $geoip_country_name: 'France', $geoip_continent_code: 'EU', $geoip_continent_name: 'Europe',
    $geoip_city_name: 'Lyon', $geoip_postal_code: '69001', $geoip_latitude: 45.7, $geoip_longitude: 4.8, $geoip_time_zone: 'Europe/Paris',
    $geoip_accuracy_radius: 20, $geoip_subdivision_1_code: 'ARA', $geoip_subdivision_1_name: 'Auvergne-Rhone-Alpes',
    $geoip_subdivision_2_code: '69', $geoip_subdivision_2_name: 'Rhone',
  });
  t.same(geoProperties(locationOf({ country_code: 'DE' })!), { $geoip_country_code: 'DE', $geoip_country_name: 'Germany' }, 'country-only, the name from ICU');
  t.equal(locationOf(null), null);
  t.equal(locationOf({ city: {} }), null, 'no country: nothing');
});

t.test('enrichment of an event', async (t) => {
  const lookup = (ip: string) => (ip === '81.2.69.160' ? { country_code: 'GB' } : null);
  const props: Record<string, unknown> = { $ip: '81.2.69.160', $set: { plan: 'pro' } };
  enrichWithGeo(props, lookup);
  t.match(props, {
    $geoip_country_code: 'GB', $geoip_country_name: 'United Kingdom',
    $set: { plan: 'pro', $geoip_country_code: 'GB' }, $set_once: { $initial_geoip_country_code: 'GB', $initial_geoip_country_name: 'United Kingdom' },
  });
  const own: Record<string, unknown> = { $ip: '81.2.69.160', $geoip_country_code: 'IE' };
  enrichWithGeo(own, lookup);
  t.equal(own.$geoip_country_code, 'IE', 'what the client sent is kept');
  for (const p of [{ $ip: '81.2.69.160', $geoip_disable: true }, { $ip: '10.0.0.1' }, {}]) {
    const before = JSON.stringify(p);
    enrichWithGeo(p as Record<string, unknown>, lookup);
    t.equal(JSON.stringify(p), before, `left alone: ${before}`);
  }
});

t.test('the bundled database works offline', async (t) => {
  const db = openGeoIpDatabase(null);
  t.match(locationOf(db.lookup('8.8.8.8')), { countryCode: 'US' }, 'a public IPv4 address');
  t.match(locationOf(db.lookup('2001:4860:4860::8888')), { countryCode: 'US' }, 'and IPv6');
  t.equal(locationOf(db.lookup('127.0.0.1')), null, 'loopback is nowhere');
  t.equal(db.lookup('not an address'), null);
  // The bundled data places some private ranges in a country: enrichment never asks it about them.
  const props: Record<string, unknown> = { $ip: '192.168.1.1' };
  enrichWithGeo(props, (ip) => db.lookup(ip));
  t.same(props, { $ip: '192.168.1.1' }, 'a private address gets no location');
});

t.test('which addresses can have a location', async (t) => {
  for (const ip of ['8.8.8.8', '81.2.69.160', '2001:4860:4860::8888', '::ffff:8.8.8.8']) t.ok(isPublicAddress(ip), ip);
  for (const ip of ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '127.0.0.1', '100.64.0.1', '169.254.1.1', '0.0.0.0', '224.0.0.1',
    '::1', 'fd00::1', 'fe80::1', 'ff02::1', '::ffff:10.0.0.1', '2001:db8::1', 'not an ip', '300.1.1.1']) t.notOk(isPublicAddress(ip), ip);
});
