/**
 * The GeoIP database a worker looks addresses up in: a MaxMind-format (`.mmdb`) file read into memory once per
 * thread (the bundled one is ~8 MB) and searched by `mmdb-lib` (a binary trie, microseconds a lookup).
 *
 * By default the country database of `@ip-location-db/geo-whois-asn-country-mmdb` (CC0 package of data under
 * CC BY 4.0 from the NRO: attribution in config/README.md), which installs with `npm install` and needs no network;
 * `QUILL_GEOIP_DB` names another file, e.g. a GeoLite2-City database for cities and regions.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Reader } from 'mmdb-lib';

const require = createRequire(import.meta.url);

/** Path of the bundled country database. */
export function bundledDatabasePath(): string {
  return require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb');
}

export interface GeoIpDatabase {
  /** The record for an address (null: unknown, private or not an address). */
  lookup(ip: string): unknown;
}

export function openGeoIpDatabase(path: string | null): GeoIpDatabase {
  const reader = new Reader<Record<string, unknown>>(readFileSync(path ?? bundledDatabasePath()));
  return {
    lookup(ip) {
      try {
        return reader.get(ip.trim());
      } catch {
        return null; // not an address
      }
    },
  };
}
