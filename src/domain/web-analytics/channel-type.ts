/**
 * PostHog's default channel type of a session (`$channel_type`), from the attribution of its first pageview: the
 * UTM parameters, the referring domain (`$direct` when there was none), whether an ad click id (`gclid`, `fbclid`)
 * or `gad_source` was on the landing URL. The rules are PostHog's (themselves after Google Analytics 4's default
 * channel grouping), in their order:
 *
 *  1. a campaign naming `cross-network` → Cross Network;
 *  2. paid (a cost-per-… or `paid…` medium, a `gclid`, a `gad_source`) → the paid channel of the source, else Paid
 *     Shopping for a shopping campaign, else of the medium, else of the referring domain, else Paid Search for
 *     `gad_source=1`, Paid Video for a video campaign, Paid Social with an `fbclid`, else Paid Unknown;
 *  3. no referrer, no medium, no source (or a "direct" one) and no `fbclid` → Direct;
 *  4. otherwise the organic channel of the source, else Organic Shopping for a shopping campaign, else of the
 *     medium, else of the referring domain, else Organic Video (video campaign), Push (medium ending in `push`),
 *     Organic Social (`fbclid`), Direct (no referrer), Referral (a referrer), Unknown.
 *
 * Source, medium and campaign compare in lower case, and an empty or `"null"` value counts as absent.
 */
import { MEDIUMS, ORGANIC, PAID, sourceCategory, UNCATEGORISED_SOURCES } from './channel-sources.js';
import { firstSignificantDomain } from './urls.js';

export interface ChannelInputs {
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  /** `$referring_domain` of the first pageview: `$direct` when the browser had no referrer. */
  referringDomain: string | null;
  hasGclid: boolean;
  hasFbclid: boolean;
  gadSource: string | null;
}

/** PostHog's default channel types, as `$channel_type` values. */
export const CHANNEL_TYPES = [
  'Cross Network', 'Paid Search', 'Paid Social', 'Paid Video', 'Paid Shopping', 'Paid Unknown', 'Direct', 'Organic Search',
  'Organic Social', 'Organic Video', 'Organic Shopping', 'Push', 'SMS', 'Audio', 'Email', 'Referral', 'Affiliate', 'Unknown', 'Display',
] as const;

const PAID_MEDIUMS = new Set(['cpc', 'cpm', 'cpv', 'cpa', 'ppc', 'retargeting']);
const DIRECT_SOURCES = new Set(['(direct)', 'direct', '$direct']);
const SHOPPING_CAMPAIGN = /(?:(?:[^a-df-z]|^)shop|shopping)/;
const VIDEO_CAMPAIGN = /video/;

/** `nullIf(nullIf(x, ''), 'null')`, lower-cased. */
function present(value: string | null): string | null {
  return value === null || value === '' || value === 'null' ? null : value.toLowerCase();
}

/** A source or domain looked up as written, then cut to its first significant subdomain. */
function lookupSource(name: string | null, outcome: 'paid' | 'organic'): string | null {
  if (name === null) return null;
  for (const key of [name, firstSignificantDomain(name)]) {
    if (key === '') continue;
    const category = sourceCategory(key);
    const outcomes = category === undefined ? UNCATEGORISED_SOURCES.get(key) : [PAID[category], ORGANIC[category]] as const;
    const channel = outcomes === undefined ? null : outcome === 'paid' ? outcomes[0] : outcomes[1];
    if (channel !== null) return channel;
  }
  return null;
}

function lookupMedium(medium: string | null, outcome: 'paid' | 'organic'): string | null {
  const entry = medium === null ? undefined : MEDIUMS.get(medium);
  return entry === undefined ? null : outcome === 'paid' ? entry[0] : entry[1];
}

export function channelType(inputs: ChannelInputs): string {
  const source = present(inputs.utmSource);
  const medium = present(inputs.utmMedium);
  const campaign = present(inputs.utmCampaign);
  const gad = inputs.gadSource === '' || inputs.gadSource === 'null' ? null : inputs.gadSource;
  const referrer = inputs.referringDomain;
  const shopping = campaign !== null && SHOPPING_CAMPAIGN.test(campaign);
  const video = campaign !== null && VIDEO_CAMPAIGN.test(campaign);

  if (campaign !== null && campaign.includes('cross-network')) return 'Cross Network';
  const paid = (medium !== null && (PAID_MEDIUMS.has(medium) || medium.startsWith('paid'))) || inputs.hasGclid || gad !== null;
  if (paid) {
    return lookupSource(source, 'paid')
      ?? (shopping ? 'Paid Shopping' : null)
      ?? lookupMedium(medium, 'paid')
      ?? lookupSource(referrer, 'paid')
      ?? (gad === '1' ? 'Paid Search' : video ? 'Paid Video' : inputs.hasFbclid ? 'Paid Social' : 'Paid Unknown');
  }
  if (referrer === '$direct' && medium === null && (source === null || DIRECT_SOURCES.has(source)) && !inputs.hasFbclid) return 'Direct';
  return lookupSource(source, 'organic')
    ?? (shopping ? 'Organic Shopping' : null)
    ?? lookupMedium(medium, 'organic')
    ?? lookupSource(referrer, 'organic')
    ?? (video ? 'Organic Video'
      : medium !== null && medium.endsWith('push') ? 'Push'
        : inputs.hasFbclid ? 'Organic Social'
          : referrer === '$direct' ? 'Direct'
            : referrer !== null ? 'Referral'
              : 'Unknown');
}
