// Sessions folded as PostHog's sessions table folds them (src/domain/web-analytics/sessions.ts): entry and exit,
// duration in whole seconds, the bounce rule, and parts of one session merged in any order.
import t from 'tap';
import { emptyPart, finishSession, isBounce, mergePart, durationSeconds, RANK_OTHER, RANK_PAGE, type Attribution, type SessionPart } from '../../src/domain/web-analytics/sessions.js';

const attribution = (url: string, over: Partial<Attribution> = {}): Attribution => ({
  url, referringDomain: '$direct', utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null, gadSource: null,
  hasGclid: false, hasFbclid: false, ...over,
});

/** A part holding the given events: [time ms, page?, url, bounce event?]. */
function partOf(events: [number, boolean, string, boolean][]): SessionPart {
  const p = emptyPart('s', 1);
  for (const [ts, page, url, bounce] of events) {
    p.start = Math.min(p.start, ts);
    p.end = Math.max(p.end, ts);
    const rank = page ? RANK_PAGE : RANK_OTHER;
    if (rank < p.entryRank || (rank === p.entryRank && ts < p.entryTs)) Object.assign(p, { entryRank: rank, entryTs: ts, entry: attribution(url) });
    if (rank < p.exitRank || (rank === p.exitRank && ts > p.exitTs)) Object.assign(p, { exitRank: rank, exitTs: ts, exitUrl: url });
    if (bounce) p.bounceEvents = Math.min(2, p.bounceEvents + 1);
  }
  return p;
}

t.test('the bounce rule', async (t) => {
  t.equal(isBounce(0, 0), null, 'no pageview, screen or autocapture: neither');
  t.equal(isBounce(1, 9), true, 'one page, under 10 s');
  t.equal(isBounce(1, 10), false, '10 s is not a bounce');
  t.equal(isBounce(2, 0), false, 'two pages or an autocapture');
  t.equal(durationSeconds(1_000.9e3, 1_010.1e3), 10, 'whole seconds: 1000.9 s to 1010.1 s is 10');
  t.equal(durationSeconds(999, 1_000), 1, 'across a second boundary counts 1 even for 1 ms');
});

t.test('entry and exit prefer pages; other events only without them', async (t) => {
  const s = finishSession(partOf([
    [1_000, false, 'https://x.test/identify', false],
    [2_000, true, 'https://x.test/landing?utm_source=a', true],
    [5_000, true, 'https://x.test/pricing#top', true],
    [9_000, false, 'https://x.test/late-custom', false],
  ]));
  t.match(s, { entryUrl: 'https://x.test/landing?utm_source=a', entryPathname: '/landing', exitPathname: '/pricing', duration: 8, isBounce: false, channelType: 'Direct' });
  const only = finishSession(partOf([[1_000, false, 'https://x.test/a', false], [3_000, false, 'https://x.test/b', false]]));
  t.match(only, { entryPathname: '/a', exitPathname: '/b', isBounce: null });
});

t.test('parts merge to the same session in any order', async (t) => {
  const events: [number, boolean, string, boolean][] = [
    [10_000, true, 'https://x.test/1', true], [11_000, false, 'https://x.test/x', true], [14_000, true, 'https://x.test/2', true],
    [16_000, true, 'https://x.test/3', true], [25_000, false, 'https://x.test/y', false],
  ];
  const whole = finishSession(partOf(events));
  for (const split of [[0, 2], [1, 3], [4, 0], [2, 2]]) {
    const a = partOf(events.filter((_, i) => i % 2 === split[0]! % 2));
    const b = partOf(events.filter((_, i) => i % 2 !== split[0]! % 2));
    a.counted = 1;
    b.counted = 2;
    a.values = { '"x"': 1 };
    b.values = { '"x"': 2, '"y"': 1 };
    for (const [into, other] of [[a, b], [b, a]] as const) {
      const c = structuredClone(into);
      mergePart(c, structuredClone(other));
      const s = finishSession(c);
      t.same([s.start, s.end, s.entryUrl, s.exitUrl, s.isBounce, c.counted, c.values], [whole.start, whole.end, whole.entryUrl, whole.exitUrl, whole.isBounce, 3, { '"x"': 3, '"y"': 1 }]);
    }
  }
});
