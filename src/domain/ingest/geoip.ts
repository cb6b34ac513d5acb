/**
 * GeoIP enrichment of events at ingestion, as PostHog's GeoIP transformation does it: from the event's `$ip`, the
 * `$geoip_*` event properties (country, and city, subdivisions, location, time zone when the database has them),
 * the same as person properties (`$set`) and the first ones seen as `$initial_geoip_*` (`$set_once`). An event
 * with `$geoip_disable: true`, without `$ip`, or whose address the database does not know is left as it is, and
 * properties the client sent itself are kept.
 *
 * The database is any MaxMind-format file (src/stores/geoip/geoip-database.ts reads it); two record shapes are
 * understood: MaxMind's GeoIP2/GeoLite2 (`country.iso_code`, `city.names.en`…) and the country-only one of the
 * database Quill ships (`country_code`).
 */

export interface GeoLocation {
  countryCode: string;
  countryName: string | null;
  continentCode: string | null;
  continentName: string | null;
  cityName: string | null;
  postalCode: string | null;
  latitude: number | null;
  longitude: number | null;
  timeZone: string | null;
  accuracyRadius: number | null;
  subdivisions: { code: string | null; name: string | null }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const englishName = (v: unknown): string | null => (isObject(v) && isObject(v.names) ? str(v.names.en) : null);

let regionNames: Intl.DisplayNames | null | undefined;

/** A country's English name from its ISO code (Node's ICU data), for databases that only hold the code. */
function countryName(code: string): string | null {
  if (regionNames === undefined) {
    try {
      regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
    } catch {
      regionNames = null;
    }
  }
  try {
    const name = regionNames?.of(code);
    return name !== undefined && name !== code ? name : null;
  } catch {
    return null;
  }
}

/** A database record as a location, or null when it names no country. */
export function locationOf(record: unknown): GeoLocation | null {
  if (!isObject(record)) return null;
  const flat = str(record.country_code);
  const country = isObject(record.country) ? record.country : null;
  const code = flat ?? (country ? str(country.iso_code) : null);
  if (code === null) return null;
  const location = isObject(record.location) ? record.location : {};
  const continent = isObject(record.continent) ? record.continent : null;
  return {
    countryCode: code,
    countryName: englishName(country) ?? countryName(code),
    continentCode: continent ? str(continent.code) : null,
    continentName: englishName(continent),
    cityName: englishName(record.city),
    postalCode: isObject(record.postal) ? str(record.postal.code) : null,
    latitude: num(location.latitude),
    longitude: num(location.longitude),
    timeZone: str(location.time_zone),
    accuracyRadius: num(location.accuracy_radius),
    subdivisions: Array.isArray(record.subdivisions)
      ? record.subdivisions.filter(isObject).map((s) => ({ code: str(s.iso_code), name: englishName(s) }))
      : [],
  };
}

/** The `$geoip_*` properties of a location (only those it has). */
export function geoProperties(g: GeoLocation): Record<string, string | number> {
  const out: Record<string, string | number | null> = {
    $geoip_country_code: g.countryCode,
    $geoip_country_name: g.countryName,
    $geoip_continent_code: g.continentCode,
    $geoip_continent_name: g.continentName,
    $geoip_city_name: g.cityName,
    $geoip_postal_code: g.postalCode,
    $geoip_latitude: g.latitude,
    $geoip_longitude: g.longitude,
    $geoip_time_zone: g.timeZone,
    $geoip_accuracy_radius: g.accuracyRadius,
  };
  g.subdivisions.forEach((s, i) => {
    out[`$geoip_subdivision_${i + 1}_code`] = s.code;
    out[`$geoip_subdivision_${i + 1}_name`] = s.name;
  });
  return Object.fromEntries(Object.entries(out).filter((e): e is [string, string | number] => e[1] !== null));
}

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * Whether an address can have a location: not private, loopback, link-local, shared (CGNAT), multicast or reserved.
 * Decided here rather than left to the database: the bundled one places some private ranges in a country.
 */
export function isPublicAddress(ip: string): boolean {
  let text = ip.trim().toLowerCase();
  if (text.startsWith('::ffff:') && V4.test(text.slice(7))) text = text.slice(7);
  const v4 = V4.exec(text);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    if ([a, b, Number(v4[3]), Number(v4[4])].some((x) => x > 255)) return false;
    return !(a === 0 || a === 10 || a === 127 || a >= 224 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254)
      || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 192 && b === 0) || (a === 198 && (b === 18 || b === 19)));
  }
  if (!text.includes(':')) return false;
  // IPv6: loopback, unspecified, unique local (fc00::/7), link-local (fe80::/10), multicast (ff00::/8), documentation.
  if (text === '::1' || text === '::') return false;
  return !/^(f[cd]|fe[89ab]|ff|2001:db8:)/.test(text);
}

/**
 * Adds the location of the event's `$ip` to its properties (in place). `lookup` answers a database record for an
 * address, or null.
 */
export function enrichWithGeo(props: Record<string, unknown>, lookup: (ip: string) => unknown): void {
  if (props.$geoip_disable === true) return;
  const ip = props.$ip;
  if (typeof ip !== 'string' || !isPublicAddress(ip)) return;
  const location = locationOf(lookup(ip));
  if (location === null) return;
  const geo = geoProperties(location);
  const set = isObject(props.$set) ? props.$set : {};
  const setOnce = isObject(props.$set_once) ? props.$set_once : {};
  for (const [key, value] of Object.entries(geo)) {
    if (!(key in props)) props[key] = value;
    if (!(key in set)) set[key] = value;
    const initial = key.replace('$geoip_', '$initial_geoip_');
    if (!(initial in setOnce)) setOnce[initial] = value;
  }
  props.$set = set;
  props.$set_once = setOnce;
}
