/**
 * The value a row of `WebStatsTableQuery` is grouped by, per breakdown, as PostHog defines it: some are the
 * event's own properties (the page viewed, browser, country…), the others the session's (entry page, channel,
 * UTM parameters…). Tuples (viewport, region, city) are arrays. A null value drops the event or session from the
 * table, except for the UTM breakdowns, which show sessions without the parameter as a null row.
 */
import { propertyNumber, propertyText } from '../analytics/property-filters.js';
import type { Breakdown } from './query.js';
import type { WebSession } from './sessions.js';
import { domainOf, pathOf } from './urls.js';

/** Breakdowns read from each counted event; the others from the session. */
export const EVENT_BREAKDOWNS: ReadonlySet<Breakdown> = new Set<Breakdown>([
  'Page', 'PreviousPage', 'ScreenName', 'Browser', 'OS', 'Viewport', 'DeviceType', 'Country', 'Region', 'City', 'Timezone', 'Language',
]);

/** The event properties an event breakdown reads (the scan reads only these columns). */
export const BREAKDOWN_KEYS: Readonly<Record<string, readonly string[]>> = {
  Page: ['$pathname'],
  PreviousPage: ['$prev_pageview_pathname', '$current_url', '$referrer'],
  ScreenName: ['$screen_name'],
  Browser: ['$browser'],
  OS: ['$os'],
  Viewport: ['$viewport_width', '$viewport_height'],
  DeviceType: ['$device_type'],
  Country: ['$geoip_country_code'],
  Region: ['$geoip_country_code', '$geoip_subdivision_1_code', '$geoip_subdivision_1_name'],
  City: ['$geoip_country_code', '$geoip_city_name'],
  Timezone: ['$timezone_offset'],
  Language: ['$browser_language'],
};

/** A property as text, null when absent or JSON null (what `properties.$x IS NOT NULL` keeps). */
const text = (v: unknown): string | null => (v === undefined || v === null ? null : propertyText(v));

/**
 * An event's breakdown value, as the key rows are grouped by (JSON of the value), or null when the event has none.
 * `get(key)` reads one of the event's properties (undefined: absent); `clean` applies path cleaning to pathnames.
 */
export function eventBreakdownKey(b: Breakdown, get: (key: string) => unknown, clean: (path: string) => string): string | null {
  const key = (v: unknown) => (v === null ? null : JSON.stringify(v));
  switch (b) {
    case 'Page': {
      const p = text(get('$pathname'));
      return key(p === null ? null : clean(p));
    }
    case 'PreviousPage': {
      const prev = text(get('$prev_pageview_pathname'));
      if (prev !== null) return key(clean(prev));
      const referrer = text(get('$referrer'));
      if (referrer === null) return null;
      const current = text(get('$current_url'));
      // Navigation within the site without a single-page app: the referrer is a page of the same domain.
      if (current !== null && domainOf(current) === domainOf(referrer)) return key(clean(pathOf(referrer)));
      return key(referrer);
    }
    case 'Viewport': {
      const w = propertyNumber(get('$viewport_width'));
      const h = propertyNumber(get('$viewport_height'));
      return w === null || h === null || w === 0 || h === 0 ? null : key([w, h]);
    }
    case 'Region': {
      const code = text(get('$geoip_subdivision_1_code'));
      return code === null ? null : key([text(get('$geoip_country_code')), code, text(get('$geoip_subdivision_1_name'))]);
    }
    case 'City': {
      const city = text(get('$geoip_city_name'));
      return city === null ? null : key([text(get('$geoip_country_code')), city]);
    }
    case 'Timezone': {
      // Minutes west of UTC (the browser's getTimezoneOffset), shown as hours east.
      const offset = propertyNumber(get('$timezone_offset'));
      return offset === null ? null : key(-offset / 60);
    }
    default:
      return key(text(get(BREAKDOWN_KEYS[b]![0]!)));
  }
}

/** The value a session breakdown groups a session by (null: PostHog's null row, or the session is left out). */
export function sessionBreakdownValue(b: Breakdown, s: WebSession, clean: (path: string) => string): unknown {
  const a = s.attribution;
  switch (b) {
    case 'InitialPage': return s.entryPathname === null ? null : clean(s.entryPathname);
    case 'ExitPage': return s.exitPathname === null ? null : clean(s.exitPathname);
    case 'ExitClick': return s.part.lastClickUrl;
    case 'InitialChannelType': return s.channelType;
    case 'InitialReferringDomain': return a?.referringDomain ?? null;
    case 'InitialUTMSource': return a?.utmSource ?? null;
    case 'InitialUTMMedium': return a?.utmMedium ?? null;
    case 'InitialUTMCampaign': return a?.utmCampaign ?? null;
    case 'InitialUTMTerm': return a?.utmTerm ?? null;
    case 'InitialUTMContent': return a?.utmContent ?? null;
    case 'InitialUTMSourceMediumCampaign': {
      const source = a?.utmSource ?? (a?.referringDomain ? `referrer:${a.referringDomain}` : '(none)');
      return [source, a?.utmMedium ?? '(none)', a?.utmCampaign ?? '(none)'].join(' / ');
    }
    default: return null;
  }
}

/** Session breakdowns that keep sessions whose value is null (PostHog shows them as a row). */
export const KEEPS_NULL: ReadonlySet<Breakdown> = new Set<Breakdown>([
  'InitialUTMSource', 'InitialUTMCampaign', 'InitialUTMMedium', 'InitialUTMTerm', 'InitialUTMContent',
]);
