/**
 * What the Web analytics page shows, as pure functions: the tables it offers (PostHog's breakdowns) and the filter a
 * click on a row adds, how an overview item reads, and web vitals' bands (web.dev's thresholds, which PostHog uses:
 * good up to the first, poor above the second, needs improvement between).
 */

export interface TableTab {
  label: string;
  breakdown: string;
  /** The property a click on a row filters by: an event property, or a session property. */
  filter: { type: 'event' | 'session'; key: string } | null;
  /** Extra fields of the query (the page tables show the bounce rate). */
  extra?: Record<string, unknown>;
}

export const TABLE_GROUPS: { title: string; tabs: TableTab[] }[] = [
  {
    title: 'Paths',
    tabs: [
      { label: 'Pages', breakdown: 'Page', filter: { type: 'event', key: '$pathname' }, extra: { includeBounceRate: true } },
      { label: 'Entry pages', breakdown: 'InitialPage', filter: { type: 'session', key: '$entry_pathname' }, extra: { includeBounceRate: true } },
      { label: 'Exit pages', breakdown: 'ExitPage', filter: { type: 'session', key: '$end_pathname' } },
    ],
  },
  {
    title: 'Sources',
    tabs: [
      { label: 'Channels', breakdown: 'InitialChannelType', filter: { type: 'session', key: '$channel_type' } },
      { label: 'Referrers', breakdown: 'InitialReferringDomain', filter: { type: 'session', key: '$entry_referring_domain' } },
      { label: 'UTM sources', breakdown: 'InitialUTMSource', filter: { type: 'session', key: '$entry_utm_source' } },
      { label: 'UTM mediums', breakdown: 'InitialUTMMedium', filter: { type: 'session', key: '$entry_utm_medium' } },
      { label: 'UTM campaigns', breakdown: 'InitialUTMCampaign', filter: { type: 'session', key: '$entry_utm_campaign' } },
    ],
  },
  {
    title: 'Devices and places',
    tabs: [
      { label: 'Browsers', breakdown: 'Browser', filter: { type: 'event', key: '$browser' } },
      { label: 'OS', breakdown: 'OS', filter: { type: 'event', key: '$os' } },
      { label: 'Device types', breakdown: 'DeviceType', filter: { type: 'event', key: '$device_type' } },
      { label: 'Countries', breakdown: 'Country', filter: { type: 'event', key: '$geoip_country_code' } },
      { label: 'Languages', breakdown: 'Language', filter: null },
    ],
  },
];

/** A property filter of the page, as the query API takes it. */
export interface PageFilter {
  type: 'event' | 'session';
  key: string;
  value: string;
  operator: 'exact';
}

/** The filter a click on a row adds (null: the tab has none, or the value is not one). */
export function rowFilter(tab: TableTab, value: unknown): PageFilter | null {
  if (tab.filter === null || typeof value !== 'string') return null;
  return { ...tab.filter, value, operator: 'exact' };
}

/** Filters as trends take them: session properties are web analytics' own, trends leave them out. */
export function eventFilters(filters: readonly PageFilter[]): PageFilter[] {
  return filters.filter((f) => f.type === 'event');
}

export interface OverviewItem {
  key: string;
  kind: 'unit' | 'duration_s' | 'percentage';
  value: number | null;
  previous: number | null;
  changeFromPreviousPct: number | null;
  isIncreaseBad: boolean | null;
}

/** An item's value as the page prints it: counts grouped, durations as `1m 05s`, percentages with one decimal. */
export function itemText(kind: OverviewItem['kind'], v: number | null): string {
  if (v === null) return '–';
  if (kind === 'percentage') return `${v.toFixed(1)}%`;
  if (kind === 'duration_s') {
    const s = Math.round(v);
    return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  }
  return v.toLocaleString('en-US', { maximumFractionDigits: 0 });
}

/** Whether a change is good news: up is good unless the item says an increase is bad. */
export function changeTone(item: Pick<OverviewItem, 'changeFromPreviousPct' | 'isIncreaseBad'>): 'good' | 'bad' | 'flat' {
  const c = item.changeFromPreviousPct;
  if (c === null || c === 0) return 'flat';
  return (c > 0) !== (item.isIncreaseBad === true) ? 'good' : 'bad';
}

export type Vital = 'INP' | 'LCP' | 'CLS' | 'FCP';
export const VITALS: Vital[] = ['INP', 'LCP', 'CLS', 'FCP'];

/** [good, poor] thresholds: milliseconds, except CLS (a score). */
export const VITAL_THRESHOLDS: Record<Vital, [number, number]> = { INP: [200, 500], LCP: [2500, 4000], CLS: [0.1, 0.25], FCP: [1800, 3000] };

export type Band = 'good' | 'needs_improvements' | 'poor';

export function vitalBand(metric: Vital, value: number): Band {
  const [good, poor] = VITAL_THRESHOLDS[metric];
  return value <= good ? 'good' : value <= poor ? 'needs_improvements' : 'poor';
}

export function vitalText(metric: Vital, value: number | null): string {
  if (value === null) return '–';
  return metric === 'CLS' ? value.toFixed(3) : value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

/** The trends source of a WebVitalsQuery: each metric at the percentile, per day. */
export function vitalsSource(percentile: 'p75' | 'p90' | 'p99', dateRange: object, properties: PageFilter[]): Record<string, unknown> {
  return {
    kind: 'TrendsQuery',
    dateRange,
    interval: 'day',
    properties: eventFilters(properties),
    series: [
      ...VITALS.map((m) => ({ kind: 'EventsNode', event: '$web_vitals', name: '$web_vitals', custom_name: m, math: percentile, math_property: `$web_vitals_${m}_value` })),
      // How many samples each day has: a day without any shows 0 for every percentile, which is no measurement.
      { kind: 'EventsNode', event: '$web_vitals', name: '$web_vitals', custom_name: SAMPLES, math: 'total' },
    ],
    trendsFilter: { display: 'ActionsLineGraph' },
  };
}

/** The name of the series counting web vitals samples per day. */
export const SAMPLES = 'samples';

/** The latest day with samples (-1: none), from the samples series' counts. */
export function lastMeasuredDay(samples: readonly (number | null)[]): number {
  for (let i = samples.length - 1; i >= 0; i--) if ((samples[i] ?? 0) > 0) return i;
  return -1;
}

/** A metric's value on that day (null when no day has samples). */
export function valueOnDay(data: readonly (number | null)[], day: number): number | null {
  return day < 0 ? null : data[day] ?? null;
}

/** The live count's question: distinct persons with a pageview in the last 30 minutes (HogQL). */
export const LIVE_VISITORS_SQL = "SELECT count(DISTINCT person_id) FROM events WHERE event = '$pageview' AND timestamp > now() - INTERVAL 30 MINUTE";
