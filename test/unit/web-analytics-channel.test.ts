// PostHog's default channel type rules (src/domain/web-analytics/channel-type.ts), case by case, in rule order.
import t from 'tap';
import { channelType, type ChannelInputs } from '../../src/domain/web-analytics/channel-type.js';
import { domainOf, firstSignificantDomain, pathOf, withoutQueryAndFragment } from '../../src/domain/web-analytics/urls.js';

const none: ChannelInputs = { utmSource: null, utmMedium: null, utmCampaign: null, referringDomain: null, hasGclid: false, hasFbclid: false, gadSource: null };
const ch = (over: Partial<ChannelInputs>) => channelType({ ...none, ...over });

t.test('each rule of the default channel type', async (t) => {
  const cases: [Partial<ChannelInputs>, string, string][] = [
    [{ utmCampaign: 'Spring-Cross-Network' }, 'Cross Network', 'a cross-network campaign comes first, in any case'],
    [{ utmMedium: 'cpc', utmSource: 'google' }, 'Paid Search', 'cpc on a search source'],
    [{ utmMedium: 'paid_social', utmSource: 'facebook' }, 'Paid Social', 'a medium starting with paid'],
    [{ hasGclid: true, referringDomain: 'www.google.com' }, 'Paid Search', 'a gclid, the source from the referrer'],
    [{ hasGclid: true, referringDomain: '$direct' }, 'Paid Unknown', 'a gclid and nothing else'],
    [{ gadSource: '1', referringDomain: '$direct' }, 'Paid Search', 'gad_source=1'],
    [{ gadSource: '5', referringDomain: '$direct', utmCampaign: 'summer video' }, 'Paid Video', 'a paid video campaign'],
    [{ utmMedium: 'cpc', utmCampaign: 'eshop-sale' }, 'Paid Shopping', 'a shopping campaign ("eshop")'],
    [{ utmMedium: 'cpc', utmCampaign: 'workshop' }, 'Paid Unknown', '"workshop" is not a shopping campaign (k before shop)'],
    [{ utmMedium: 'cpm' }, 'Display', 'cpm is a display medium when paid'],
    [{ utmMedium: 'cpc', hasFbclid: true }, 'Paid Social', 'a paid fbclid'],
    [{ referringDomain: '$direct' }, 'Direct', 'no referrer, no parameters'],
    [{ referringDomain: '$direct', utmSource: '(direct)' }, 'Direct', 'a source saying direct'],
    [{ referringDomain: '$direct', hasFbclid: true }, 'Organic Social', 'an fbclid without a referrer is social'],
    [{ referringDomain: 'www.google.co.uk' }, 'Organic Search', 'a search engine, found by its first significant domain'],
    [{ referringDomain: 'news.ycombinator.com' }, 'Organic Social', 'a social site'],
    [{ referringDomain: 'www.youtube.com' }, 'Organic Video', 'a video site'],
    [{ referringDomain: 'mail.google.com' }, 'Email', 'a mail client'],
    [{ utmSource: 'Newsletter', referringDomain: '$direct' }, 'Email', 'a source in upper case is compared in lower case'],
    [{ utmMedium: 'email', referringDomain: 'example.org' }, 'Email', 'an email medium'],
    [{ utmMedium: 'web-push', referringDomain: '$direct' }, 'Push', 'a medium ending in push'],
    [{ utmMedium: 'affiliate' }, 'Affiliate', 'an affiliate medium'],
    [{ utmCampaign: 'shopping days', referringDomain: 'example.org' }, 'Organic Shopping', 'an organic shopping campaign'],
    [{ referringDomain: 'blog.example.org' }, 'Referral', 'any other referrer'],
    [{ utmSource: 'null', utmMedium: '', referringDomain: '$direct' }, 'Direct', '"null" and empty parameters count as absent'],
    [{}, 'Unknown', 'nothing known at all'],
  ];
  for (const [inputs, want, why] of cases) t.equal(ch(inputs), want, why);
});

t.test('URL functions as ClickHouse has them', async (t) => {
  t.equal(pathOf('https://x.test/a/b?q=1#f'), '/a/b');
  t.equal(pathOf('https://x.test'), '');
  t.equal(pathOf('https://x.test?q'), '');
  t.equal(domainOf('https://user@www.x.test:8080/p'), 'www.x.test');
  t.equal(domainOf('not a url'), '');
  t.equal(withoutQueryAndFragment('https://x.test/p?q=1#f'), 'https://x.test/p');
  t.equal(firstSignificantDomain('www.google.co.uk'), 'google.co.uk');
  t.equal(firstSignificantDomain('a.b.example.com'), 'example.com');
  t.equal(firstSignificantDomain('localhost'), '');
});
