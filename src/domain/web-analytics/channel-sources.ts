/**
 * What a traffic source or medium is, for the channel type rules (src/domain/web-analytics/channel-type.ts).
 *
 * PostHog looks these up in a ClickHouse dictionary built from Google Analytics 4's published source categories
 * (about two thousand rows: every app id and country domain of every network). Quill keeps the same categories
 * and outcomes for the sources that carry most traffic, written out here by hand; a source missing from this list
 * falls through to the rules that follow the lookup (a referral, usually), as an unknown source does in PostHog.
 */

/** A source's category; what it means for a paid and an organic visit is `PAID` / `ORGANIC` below. */
export type SourceCategory = 'Search' | 'Social' | 'Video' | 'Shopping' | 'Email';

export const PAID: Record<SourceCategory, string | null> = {
  Search: 'Paid Search', Social: 'Paid Social', Video: 'Paid Video', Shopping: 'Paid Shopping', Email: null,
};
export const ORGANIC: Record<SourceCategory, string> = {
  Search: 'Organic Search', Social: 'Organic Social', Video: 'Organic Video', Shopping: 'Organic Shopping', Email: 'Email',
};

const SOURCES: Record<SourceCategory, readonly string[]> = {
  Search: [
    'google', 'google.com', 'www.google.com', 'google.co.uk', 'google.de', 'google.fr', 'google.ca', 'google.com.au',
    'google.co.in', 'google.es', 'google.it', 'google.nl', 'google.com.br', 'google.co.jp', 'google.com.mx', 'google.pl',
    'bing', 'bing.com', 'cn.bing.com', 'yahoo', 'yahoo.com', 'search.yahoo.com', 'yahoo.co.jp', 'search.yahoo.co.jp',
    'duckduckgo', 'duckduckgo.com', 'baidu', 'baidu.com', 'm.baidu.com', 'yandex', 'yandex.ru', 'yandex.com', 'ya.ru',
    'ecosia', 'ecosia.org', 'search.brave.com', 'ask', 'ask.com', 'aol', 'search.aol.com', 'naver', 'naver.com',
    'search.naver.com', 'seznam', 'seznam.cz', 'qwant', 'qwant.com', 'startpage', 'startpage.com', 'so.360.cn', 'sogou',
    'sogou.com', 'daum.net', 'search.daum.net', 'coccoc.com', 'kagi.com', 'you.com', 'perplexity.ai', 'chatgpt.com',
  ],
  Social: [
    'facebook', 'facebook.com', 'm.facebook.com', 'l.facebook.com', 'lm.facebook.com', 'fb', 'instagram', 'instagram.com',
    'l.instagram.com', 'ig', 'twitter', 'twitter.com', 't.co', 'x.com', 'linkedin', 'linkedin.com', 'lnkd.in', 'reddit',
    'reddit.com', 'old.reddit.com', 'out.reddit.com', 'pinterest', 'pinterest.com', 'tiktok', 'tiktok.com', 'snapchat',
    'snapchat.com', 'tumblr', 'tumblr.com', 'quora', 'quora.com', 'news.ycombinator.com', 'ycombinator.com',
    'mastodon.social', 'threads.net', 'bsky.app', 'discord', 'discord.com', 'discordapp.com', 't.me', 'telegram',
    'whatsapp', 'whatsapp.com', 'vk.com', 'weibo', 'weibo.com', 'medium.com', 'producthunt.com', 'meetup.com',
    'stackoverflow.com', 'stackexchange.com', 'slack', 'slack.com', 'messenger', 'messenger.com', 'line', 'line.me',
  ],
  Video: [
    'youtube', 'youtube.com', 'm.youtube.com', 'youtu.be', 'vimeo', 'vimeo.com', 'twitch', 'twitch.tv', 'dailymotion',
    'dailymotion.com', 'bilibili.com', 'wistia', 'wistia.com', 'netflix', 'netflix.com', 'rumble.com',
  ],
  Shopping: [
    'amazon', 'amazon.com', 'amazon.co.uk', 'amazon.de', 'amazon.fr', 'amazon.ca', 'amazon.in', 'amazon.co.jp', 'ebay',
    'ebay.com', 'ebay.co.uk', 'ebay.de', 'etsy', 'etsy.com', 'shopify', 'shopify.com', 'walmart', 'walmart.com',
    'aliexpress', 'aliexpress.com', 'alibaba', 'alibaba.com', 'mercadolibre.com', 'target.com', 'igshopping',
    'google shopping', 'shopping.google.com', 'shopping.yahoo.com', 'rakuten.co.jp', 'zalando.de', 'bol.com', 'allegro.pl',
  ],
  Email: [
    'mail.google.com', 'gmail', 'gmail.com', 'outlook.live.com', 'outlook.office.com', 'outlook.office365.com', 'mail.yahoo.com',
    'mail.aol.com', 'mail.proton.me', 'com.apple.mobilemail', 'email', 'e-mail', 'e_mail', 'e mail', 'newsletter',
  ],
};

const bySource = new Map<string, SourceCategory>();
for (const [category, names] of Object.entries(SOURCES) as [SourceCategory, readonly string[]][]) {
  for (const name of names) bySource.set(name, category);
}

/** The category of a source or referring domain as written (lower case), or undefined. */
export function sourceCategory(name: string): SourceCategory | undefined {
  return bySource.get(name);
}

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
