// The console's recordings in headless Chromium: the recording settings saved from the Settings page (and seen by
// the remote config), the list with a posted recording, a person's page linking to theirs, and a recording's page
// playing it: rrweb's Replayer rebuilds the recorded page in an iframe.
import { join } from 'node:path';
import t from 'tap';
import { chromiumUnavailable, keepScreenshot } from '../helpers/chromium.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { eventually } from '../helpers/eventually.js';
import { event, sendBatch } from '../helpers/ingest.js';
import { missing } from '../helpers/required-environment.js';
import { PROJECT_KEY } from '../helpers/quill.js';
import { postSnapshots, rr, snapshot } from '../helpers/recordings.js';

const PASSWORD = 'console-test-password';
/** The recording page with its timeline, for a reader (not compared). */
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'console');
const SESSION = 'console-session-0001';
/** 150 chunks, one request each: more blobs than the player's first group (10) and than one group (100). */
const LONG_SESSION = 'console-session-long';
const LONG_CHUNKS = 150;

/** A recorded page as rrweb serialises it: <html><head></head><body><h1 id="hello">Hello replay</h1></body></html>. */
function fullSnapshot(ts: number) {
  return {
    type: 2,
    timestamp: ts,
    data: {
      node: {
        type: 0, id: 1, childNodes: [
          { type: 1, id: 2, name: 'html', publicId: '', systemId: '' },
          {
            type: 2, id: 3, tagName: 'html', attributes: {}, childNodes: [
              { type: 2, id: 4, tagName: 'head', attributes: {}, childNodes: [] },
              { type: 2, id: 5, tagName: 'body', attributes: {}, childNodes: [
                { type: 2, id: 6, tagName: 'h1', attributes: { id: 'hello' }, childNodes: [{ type: 3, id: 7, textContent: 'Hello replay' }] },
              ] },
            ],
          },
        ],
      },
      initialOffset: { left: 0, top: 0 },
    },
  };
}

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the console recordings browser suite', unavailable);
else suite();

function suite(): void {
  const s = consoleSuite(t, {
    password: PASSWORD,
    async seed({ q }) {
      if ((await sendBatch(q.base, [event('replayed-visitor', 'signed up', { $set: { email: 'rita@example.com' } })])).status !== 200) throw new Error('person');
      const t0 = Date.now() - 30_000;
      const res = await postSnapshots(q.base, [snapshot(SESSION, 'replayed-visitor', [
        rr.meta(t0, 'https://shop.test/welcome'), fullSnapshot(t0 + 1) as never, rr.move(t0 + 500), rr.click(t0 + 1_000), rr.console(t0 + 1_200, 'error'), rr.move(t0 + 4_000),
      ])]);
      if (res.status !== 200) throw new Error(`snapshots: ${res.status}`);
      // The session's events, as posthog-js tags them with its session id: the timeline beside the player.
      const at = (ms: number) => ({ timestamp: new Date(t0 + ms).toISOString() });
      const sessionEvents = [
        event('replayed-visitor', '$pageview', { $session_id: SESSION, $current_url: 'https://shop.test/welcome?ref=ad' }, at(100)),
        event('replayed-visitor', '$autocapture', { $session_id: SESSION, $event_type: 'click', $el_text: 'Buy now' }, at(1_000)),
        event('replayed-visitor', 'checkout started', { $session_id: SESSION }, at(2_000)),
        event('replayed-visitor', 'elsewhere', { $session_id: 'another-session' }, at(2_500)),
      ];
      if ((await sendBatch(q.base, sessionEvents)).status !== 200) throw new Error('session events');
      const l0 = Date.now() - 600_000;
      for (let k = 0; k < LONG_CHUNKS; k++) {
        const at = l0 + k * 2_000;
        const events = [rr.move(at + 10), rr.click(at + 500)];
        if (k === 0) events.unshift(rr.meta(at, 'https://shop.test/long'), fullSnapshot(at + 1) as never);
        const sent = await postSnapshots(q.base, [snapshot(LONG_SESSION, 'long-visitor', events)]);
        if (sent.status !== 200) throw new Error(`long recording: ${sent.status}`);
      }
    },
  });

  t.test('settings: recording turned on from the Settings page reaches the remote config', async (t) => {
    await s.page.goto(s.url(`/project/${s.projectId}/settings`));
    await s.page.waitForSelector('[data-testid=recording-settings]');
    await s.page.check('[data-testid=recording-settings] input[name=session_recording_opt_in]');
    await s.page.fill('[data-testid=recording-settings] input[name=session_recording_sample_rate]', '50');
    await s.page.click('[data-testid=recording-settings] button[type=submit]');
    await s.page.waitForSelector('[data-testid=recording-settings] [role=status]');
    const config = await (await fetch(`${s.q.base}/array/${PROJECT_KEY}/config`)).json() as { sessionRecording: Record<string, unknown> };
    t.match(config.sessionRecording, { endpoint: '/s/', sampleRate: '0.50', masking: null });
    t.same(s.problems.splice(0), []);
  });

  t.test('the list, a person\'s recordings, and a recording played', async (t) => {
    await s.page.goto(s.url(`/project/${s.projectId}/replay`));
    await s.page.waitForSelector('[data-testid=recordings-table] tbody tr');
    const row = await s.page.textContent('[data-testid=recordings-table] tbody tr');
    t.match(row, /rita@example\.com/);
    t.match(row, /https:\/\/shop\.test\/welcome/);

    const person = await eventually('the person', async () => (await s.api.get('/api/projects/@current/persons/?distinct_id=replayed-visitor')).body.results?.[0]);
    await s.page.goto(s.url(`/project/${s.projectId}/persons/${person.uuid}`));
    await s.page.click('[data-testid=person-recordings]');
    await s.page.waitForSelector('[data-testid=recordings-table] tbody tr');
    t.equal(await s.page.locator('[data-testid=recordings-table] tbody tr').count(), 1, "the person's recording");

    await s.page.click('[data-testid=recordings-table] tbody tr a');
    await s.page.waitForSelector('[data-testid=recording-meta]');
    t.match(await s.page.textContent('[data-testid=recording-meta]'), /1 clicks.*1 errors/s);
    await s.page.waitForFunction(() => {
      const frame = document.querySelector('[data-testid=replay-stage] iframe') as HTMLIFrameElement | null;
      return frame?.contentDocument?.querySelector('#hello')?.textContent === 'Hello replay';
    }, undefined, { timeout: 30_000 });
    t.pass('the Replayer rebuilt the recorded page');
    t.equal((await s.api.get(`/api/projects/@current/session_recordings/${SESSION}/`)).body.viewed, true, 'opening it marked it viewed');

    // The timeline: the session's events and the recorded console error, at their offsets, in time order.
    await s.page.waitForFunction(() => document.querySelectorAll('[data-testid=timeline-item]').length === 4, undefined, { timeout: 15_000 });
    const items = await s.page.locator('[data-testid=timeline-item]').evaluateAll((li) => li.map((l) => [l.getAttribute('data-kind'), l.textContent?.replace(/\s+/g, ' ').trim()]));
    t.same(items, [
      ['pageview', '0:00 Pageview /welcome?ref=ad'],
      ['click', '0:01 Clicked Buy now'],
      ['console-error', '0:01 Console error x'],
      ['event', '0:02 checkout started'],
    ], "the session's events only, with the console error, each at its time into the recording");
    // Paused, a click on an item moves the player there.
    await s.page.click('[data-testid=player-toggle]');
    await s.page.locator('[data-testid=timeline-item] button').nth(3).click();
    await s.page.waitForFunction(() => document.querySelector('[data-testid=player-clock]')?.textContent?.startsWith(' 0:02 /'), undefined, { timeout: 5_000 });
    t.equal(await s.page.inputValue('[data-testid=player-seek]'), '2000', 'the seek bar follows (2,000 ms after the recording\'s first event)');
    await s.page.selectOption('[data-testid=player-speed]', '4');
    t.equal(await s.page.inputValue('[data-testid=player-speed]'), '4', 'speeds as PostHog offers');
    t.equal(await s.page.isChecked('[data-testid=player-skip-inactive]'), true, 'inactivity skipped by default');
    await keepScreenshot(s.page, join(ARTIFACTS, 'recording.png'), { fullPage: false });

    // From live events: an event of the session opens to a link to its recording.
    await s.page.goto(s.url(`/project/${s.projectId}/events`));
    await s.page.locator('[data-testid=event-row][data-event="checkout started"]').click();
    await s.page.click('[data-testid=event-recording]');
    await s.page.waitForSelector('[data-testid=recording-meta]');
    t.match(s.page.url(), new RegExp(`/replay/${SESSION}$`), "the event's session recording");
    t.same(s.problems.splice(0), []);
  });

  t.test("the list's filters: length, console errors, an event of the session", async (t) => {
    await s.page.goto(s.url(`/project/${s.projectId}/replay`));
    await s.page.waitForSelector('[data-testid=recordings-table] tbody tr');
    const rows = () => s.page.locator('[data-testid=recordings-table] tbody tr').count();
    t.equal(await rows(), 2, 'both recordings');
    await s.page.check('[data-testid=recording-filters] input[name=with_errors]');
    await s.page.waitForFunction(() => document.querySelectorAll('[data-testid=recordings-table] tbody tr').length === 1);
    t.match(await s.page.textContent('[data-testid=recordings-table] tbody tr'), /rita@example\.com/, 'the one with a console error');
    await s.page.uncheck('[data-testid=recording-filters] input[name=with_errors]');
    await s.page.selectOption('[data-testid=recording-filters] select[name=min_duration]', '60');
    await s.page.waitForFunction(() => document.querySelectorAll('[data-testid=recordings-table] tbody tr').length === 1);
    t.match(await s.page.textContent('[data-testid=recordings-table] tbody tr'), /4:58/, 'the five-minute one');
    await s.page.selectOption('[data-testid=recording-filters] select[name=min_duration]', '0');
    // Applied when the field is committed (Enter or leaving it), not at each keystroke.
    await s.page.fill('[data-testid=recording-filters] input[name=event]', 'checkout started');
    await s.page.press('[data-testid=recording-filters] input[name=event]', 'Enter');
    await s.page.waitForFunction(() => document.querySelectorAll('[data-testid=recordings-table] tbody tr').length === 1);
    t.match(await s.page.textContent('[data-testid=recordings-table] tbody tr'), /rita@example\.com/, 'the session with that event');
    await s.page.fill('[data-testid=recording-filters] input[name=event]', 'never sent');
    await s.page.press('[data-testid=recording-filters] input[name=event]', 'Enter');
    await s.page.waitForSelector('text=No recordings match these filters.');
    t.equal(await rows(), 0, 'none');
    t.same(s.problems.splice(0), []);
  });

  t.test('a long recording plays from its first blobs while the rest arrive', async (t) => {
    const sources = (await s.api.get(`/api/projects/@current/session_recordings/${LONG_SESSION}/snapshots`)).body.sources;
    t.equal(sources.length, LONG_CHUNKS, 'one blob per chunk');
    await s.page.goto(s.url(`/project/${s.projectId}/replay/${LONG_SESSION}`));
    await s.page.waitForFunction(() => {
      const frame = document.querySelector('[data-testid=replay-stage] iframe') as HTMLIFrameElement | null;
      return frame?.contentDocument?.querySelector('#hello')?.textContent === 'Hello replay';
    }, undefined, { timeout: 30_000 });
    t.pass('the first frame is drawn');
    await s.page.waitForFunction((n) => document.querySelector('[data-testid=player-status]')?.textContent === `${n} events`, LONG_CHUNKS * 2 + 2, { timeout: 30_000 });
    t.pass('every blob loaded, in groups, into the same player');
    // The clock's total is the whole recording (149 chunks of 2 s after the first, plus the last click), not the first group's.
    await s.page.waitForFunction(() => / \/ 4:58$/.test(document.querySelector('.replay-controls span')?.textContent ?? ''), undefined, { timeout: 10_000 });
    t.pass('the player plays to the end of the last group');
    t.same(s.problems.splice(0), []);
  });
}
