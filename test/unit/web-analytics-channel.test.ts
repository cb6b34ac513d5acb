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

t.test("sources from GA4's full list, app ids and lesser-known domains", async (t) => {
  const cases: [Partial<ChannelInputs>, string, string][] = [
    [{ referringDomain: 'com.google.android.googlequicksearchbox' }, 'Organic Search', 'the Google app'],
    [{ referringDomain: 'www.mojeek.com' }, 'Organic Search', 'a small search engine, by its first significant domain'],
    [{ utmMedium: 'cpc', utmSource: 'yandex.kz' }, 'Paid Search', 'a country domain of a search engine, paid'],
    [{ referringDomain: 'rakuten.co.jp' }, 'Organic Search', 'Rakuten is a search source in GA4'],
    [{ referringDomain: 'com.linkedin.android' }, 'Organic Social', 'the LinkedIn app'],
    [{ referringDomain: 'www.threads.com' }, 'Organic Social', 'threads.com'],
    [{ utmMedium: 'paid', utmSource: 'xing' }, 'Paid Social', 'a social network named in utm_source, paid'],
    [{ referringDomain: 'com.google.android.youtube' }, 'Organic Video', 'the YouTube app'],
    [{ utmMedium: 'cpv', utmSource: 'kick.com' }, 'Paid Video', 'a streaming site, paid'],
    [{ referringDomain: 'rutube.ru' }, 'Organic Video', 'a video site'],
    [{ utmMedium: 'cpc', utmSource: 'com.amazon.mshop.android.shopping' }, 'Paid Shopping', 'the Amazon app, paid'],
    [{ utmSource: 'temu.com', referringDomain: '$direct' }, 'Organic Shopping', 'a marketplace in utm_source'],
    [{ referringDomain: 'www.mercadolivre.com.br' }, 'Organic Shopping', 'a marketplace, by its first significant domain'],
    [{ referringDomain: 'com.google.android.gm' }, 'Email', 'the Gmail app'],
    [{ utmSource: 'ch.protonmail.android', referringDomain: '$direct' }, 'Email', 'a mail app in utm_source'],
    [{ referringDomain: 'org.kman.aquamail' }, 'Email', 'another mail app'],
    [{ utmSource: 'sms', referringDomain: '$direct' }, 'SMS', 'GA4\'s uncategorised sms source'],
    [{ utmSource: 'firebase', referringDomain: '$direct' }, 'Push', 'GA4\'s uncategorised firebase source'],
    [{ utmSource: 'sms', utmMedium: 'cpc', referringDomain: '$direct' }, 'Paid Unknown', 'sms means nothing when paid'],
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
