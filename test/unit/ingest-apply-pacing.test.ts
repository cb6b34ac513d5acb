import t from 'tap';
import { ApplyPacer, pauseForShare } from '../../src/worker/ingest/apply-pacer.js';

t.test('under contention the apply keeps half of the time at first, all of it once events wait 10 s', async (t) => {
  // share = slice / (slice + pause)
  const share = (lagMs: number) => 10 / (10 + pauseForShare(10, lagMs));
  t.equal(share(0), 0.5);
  t.equal(Math.round(share(5_000) * 100) / 100, 0.75);
  t.equal(pauseForShare(10, 10_000), 0, 'no pause from the full-share lag on');
  t.equal(pauseForShare(10, 120_000), 0);
  t.equal(pauseForShare(10, -5), 10, 'a clock step backwards counts as no lag');
  t.ok(pauseForShare(10, 1000) > pauseForShare(10, 8_000), 'the pause shrinks as the backlog ages');
});

t.test('without requests arriving the apply never pauses, whatever the machine load', async (t) => {
  const pacer = new ApplyPacer();
  t.teardown(() => pacer.close());
  t.equal(pacer.busy, false);
  t.equal(pacer.contended, false);
  t.equal(pacer.pauseAfter(10, 0), 0);
  pacer.noteRequest();
  t.equal(pacer.busy, true, 'busy right after a request');
  await new Promise((r) => setTimeout(r, 40));
  t.equal(pacer.busy, false, 'idle again once requests stop');
});

t.test('requests other than ingestion at a rate make the apply interactive for a while; a trickle or ingestion does not', async (t) => {
  const pacer = new ApplyPacer();
  t.teardown(() => pacer.close());
  t.equal(pacer.interactive, false);
  pacer.noteRequest(1, 0);
  t.equal(pacer.busy, true);
  t.equal(pacer.interactive, false, 'ingestion alone keeps the busy chunk size');
  pacer.noteRequest(1, 1);
  t.equal(pacer.interactive, false, 'one API call is a trickle');
  for (let i = 0; i < 24; i++) pacer.noteRequest(1, 1);
  t.equal(pacer.interactive, true, 'interactive once 25 arrived within the window');
  await new Promise((r) => setTimeout(r, 550));
  t.equal(pacer.interactive, false, 'no longer once such requests stop');
});

t.test('catch-up chunks wait for requests to be rare, not merely paused for a moment', async (t) => {
  const pacer = new ApplyPacer();
  t.teardown(() => pacer.close());
  t.equal(pacer.quiet, true, 'quiet before any request');
  for (let i = 0; i < 3; i++) pacer.noteRequest();
  t.equal(pacer.quiet, true, 'a few requests (a monitoring poll) keep it quiet');
  for (let i = 0; i < 5; i++) pacer.noteRequest();
  t.equal(pacer.quiet, false, 'a stream of requests does not');
  await new Promise((r) => setTimeout(r, 40));
  t.equal(pacer.busy, false, 'a gap of tens of ms ends "busy"...');
  t.equal(pacer.quiet, false, '...but not "quiet"');
  await new Promise((r) => setTimeout(r, 600));
  t.equal(pacer.quiet, true, 'quiet again once two windows passed without requests');
  pacer.noteRequest(40);
  t.equal(pacer.quiet, false, 'one frame of many requests (they queued while the thread was busy) is a stream too');
});
