/**
 * What a traffic source or medium is, for the channel type rules (src/domain/web-analytics/channel-type.ts).
 *
 * Sources: Google Analytics 4's published source categories, the list PostHog loads into a ClickHouse dictionary
 * (about 1,600 names: the domains, country domains and app ids of every network), kept as data in
 * channel-sources.data.ts. A source missing from it falls through to the rules that follow the lookup (a referral,
 * usually), as an unknown source does in PostHog. GA4 also lists two sources without a category, `firebase` (Push)
 * and `sms` (SMS): `UNCATEGORISED_SOURCES` below. One name is Quill's own, not GA4's: `newsletter` (Email).
 */
import { SOURCE_NAMES } from './channel-sources.data.js';

/** A source's category; what it means for a paid and an organic visit is `PAID` / `ORGANIC` below. */
export type SourceCategory = 'Search' | 'Social' | 'Video' | 'Shopping' | 'Email';

export const PAID: Record<SourceCategory, string | null> = {
  Search: 'Paid Search', Social: 'Paid Social', Video: 'Paid Video', Shopping: 'Paid Shopping', Email: null,
};
export const ORGANIC: Record<SourceCategory, string> = {
  Search: 'Organic Search', Social: 'Organic Social', Video: 'Organic Video', Shopping: 'Organic Shopping', Email: 'Email',
};

/** Sources Quill classifies beyond GA4's list. */
const QUILL_SOURCES: Partial<Record<SourceCategory, readonly string[]>> = { Email: ['newsletter'] };

const bySource = new Map<string, SourceCategory>();
for (const lists of [SOURCE_NAMES, QUILL_SOURCES]) {
  for (const [category, names] of Object.entries(lists) as [SourceCategory, readonly string[]][]) {
    for (const name of names) bySource.set(name, category);
  }
}

/** The category of a source or referring domain as written (lower case), or undefined. */
export function sourceCategory(name: string): SourceCategory | undefined {
  return bySource.get(name);
}

/** GA4's sources without a category, and the channel each means when paid / organic (null: nothing when paid). */
export const UNCATEGORISED_SOURCES: ReadonlyMap<string, readonly [string | null, string]> = new Map<string, readonly [string | null, string]>([
  ['firebase', [null, 'Push']], ['sms', [null, 'SMS']],
]);

/** Mediums (`utm_medium`, lower case) and the channel each means when paid / organic (null: nothing when paid). */
export const MEDIUMS: ReadonlyMap<string, readonly [string | null, string]> = new Map<string, readonly [string | null, string]>([
  ['affiliate', [null, 'Affiliate']], ['app', [null, 'Referral']], ['audio', [null, 'Audio']],
  ['banner', ['Display', 'Display']], ['cpm', ['Display', 'Display']], ['display', ['Display', 'Display']],
  ['e mail', [null, 'Email']], ['e-mail', [null, 'Email']], ['e_mail', [null, 'Email']], ['email', [null, 'Email']],
  ['expandable', ['Display', 'Display']], ['interstitial', ['Display', 'Display']], ['link', [null, 'Referral']],
  ['mobile', [null, 'Push']], ['notification', [null, 'Push']], ['partnership', [null, 'Affiliate']],
  ['partnerships', [null, 'Affiliate']], ['push', [null, 'Push']], ['referral', [null, 'Referral']],
  ['sm', ['Paid Social', 'Organic Social']], ['social', ['Paid Social', 'Organic Social']],
  ['social media', ['Paid Social', 'Organic Social']], ['social network', ['Paid Social', 'Organic Social']],
  ['social-media', ['Paid Social', 'Organic Social']], ['social-network', ['Paid Social', 'Organic Social']],
  ['video', ['Paid Video', 'Organic Video']],
]);
