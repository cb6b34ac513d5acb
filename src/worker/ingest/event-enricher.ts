/**
 * What is added to events read back from the ingest log before they are applied or exported: the GeoIP properties
 * (src/domain/ingest/geoip.ts), when QUILL_GEOIP is on. Both readers of the log (a shard's apply and the ClickHouse
 * export) call `enrichEvents`, so an event is stored and exported with the same properties. Enriching when the log
 * is read, not when it is written, keeps the acknowledgement path free of lookups; a replay enriches again with the
 * same database (events already applied are skipped by uuid).
 */
import { enrichWithGeo } from '../../domain/ingest/geoip.js';
import type { NormalizedEvent } from '../../domain/ingest/index.js';
import { openGeoIpDatabase } from '../../stores/geoip/geoip-database.js';

let enrich: ((event: NormalizedEvent) => void) | null = null;

/** Installs the enrichment this thread applies (called once per worker at start-up). */
export function installEnrichment(config: { geoip: boolean; geoipDb: string | null }): void {
  if (!config.geoip) {
    enrich = null;
    return;
  }
  const db = openGeoIpDatabase(config.geoipDb);
  enrich = (event) => enrichWithGeo(event.properties, (ip) => db.lookup(ip));
}

export function enrichEvents(events: readonly NormalizedEvent[]): void {
  if (enrich === null) return;
  for (const e of events) enrich(e);
}
