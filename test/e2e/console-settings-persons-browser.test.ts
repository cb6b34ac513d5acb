// The console in headless Chromium against the real server: the Settings page's HTML snippet (filled in with this
// server's origin and the project key, copied, and working in a page of another site once given
// opt_out_useragent_filter), the Account page's "Last used" of personal keys, the persons list searched as you type
// and sorted by the clicked column, and the not-found page for addresses the console has no page for.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { chromiumUnavailable } from '../helpers/chromium.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { eventually } from '../helpers/eventually.js';
import { allEvents, event, sendBatch } from '../helpers/ingest.js';
import { missing } from '../helpers/required-environment.js';
import { PROJECT_KEY } from '../helpers/quill.js';

const PASSWORD = 'console-test-password';
/** Persons with known names and creation days (the timestamp of their first event). */
const PEOPLE: [distinctId: string, set: Record<string, string>, day: string][] = [
  ['u-bob', { name: 'Bob' }, '2024-01-01'],
  ['u-carol', { email: 'carol@example.com' }, '2024-01-02'],
  ['u-alice', { email: 'alice@example.com' }, '2024-01-03'],
  ['anon-zed', {}, '2024-01-04'],
];

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the console settings and persons browser suite', unavailable);
else suite();

function suite(): void {
  const s = consoleSuite(t, {
    password: PASSWORD,
    async seed({ q, api }) {
      const batch = PEOPLE.map(([id, set, day]) => event(id, 'signed up', { $set: set }, { timestamp: `${day}T12:00:00Z` }));
      const res = await sendBatch(q.base, batch);
      if (res.status !== 200) throw new Error(`dataset: ${res.status}`);
      await eventually('the persons', async () => (await api.get('/api/projects/@current/persons/')).body.count === PEOPLE.length);
    },
  });

  t.test("settings: PostHog's HTML snippet with this server and the project key, copied, loads posthog-js from Quill", async (t) => {
    await s.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.q.base });
    await s.page.goto(s.url(`/project/${s.projectId}/settings`));
    const snippet = await s.page.inputValue('[data-testid=html-snippet] textarea');
    t.match(snippet, /^<script>\n[\s\S]*\/static\/array\.js[\s\S]*<\/script>$/, 'a script that loads /static/array.js');
    t.match(snippet, `posthog.init('${PROJECT_KEY}', {`, 'the project key');
    t.match(snippet, `api_host: '${s.q.base}',`, "this server's origin");
    t.match(await s.page.textContent('[data-testid=html-snippet]'), /opt_out_useragent_filter: true/, 'the headless-browser note');
    await s.page.getByRole('button', { name: 'Copy snippet' }).click();
    await s.page.getByRole('button', { name: 'Snippet copied' }).waitFor();
    t.equal(await s.page.evaluate(() => navigator.clipboard.readText()), snippet, 'the clipboard holds the snippet');

    // A page of another site (its own little server: another origin) with the snippet as copied, given the option
    // the note names (this browser is headless).
    const html = `<!doctype html><html><head>${snippet.replace('api_host:', 'opt_out_useragent_filter: true,\n        api_host:')}
<script>posthog.capture('snippet probe', { from: 'the settings page' })</script></head><body>shop</body></html>`;
    const shopServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
    await new Promise<void>((resolve) => shopServer.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => {
      shopServer.closeAllConnections();
      shopServer.close(() => resolve());
    }));
    const site = await s.browser.context.newPage();
    t.teardown(() => site.close());
    const arrayJs = site.waitForResponse(`${s.q.base}/static/array.js`);
    await site.goto(`http://127.0.0.1:${(shopServer.address() as AddressInfo).port}/`);
    t.equal((await arrayJs).status(), 200, 'array.js from Quill');
    const stored = await eventually('the captured event', async () => (await allEvents(s.api, 'event=snippet%20probe'))[0], { timeoutMs: 30_000 });
    t.match(stored.properties, { from: 'the settings page', $lib: 'web' });
    t.same(s.take(), []);
  });

  t.test('settings: test-account filters and path cleaning rules are edited in forms, named when wrong, and saved', async (t) => {
    await s.page.goto(s.url(`/project/${s.projectId}/settings`));
    const filters = s.page.locator('[data-testid=test-account-filters]');
    await filters.waitFor();
    await filters.getByRole('button', { name: '+ property filter' }).click();
    await filters.getByLabel('filter type').selectOption('person');
    await filters.getByLabel('property key').fill('email');
    await filters.getByLabel('operator').selectOption('not_icontains');
    await filters.getByLabel('property value').fill('@example.com');

    const rules = s.page.locator('[data-testid=path-cleaning-rules]');
    await rules.getByRole('button', { name: 'Add rule' }).click();
    await rules.getByLabel('path rule pattern 1').fill('/user/(\\d+');
    t.equal(await rules.locator('[data-testid=path-rule-error]').textContent(), 'Not a regular expression: unterminated group.', 'an unreadable pattern is named beside its row');
    await s.page.getByRole('button', { name: 'Save', exact: true }).click();
    t.match(await s.page.textContent('[data-testid=settings-form] [role=alert]'), /path cleaning rule above needs fixing/, 'nothing saved while a rule is wrong');
    t.same((await s.api.get('/api/projects/@current/')).body.path_cleaning_filters, []);
    await rules.getByLabel('path rule pattern 1').fill('/user/\\d+');
    await rules.getByLabel('path rule alias 1').fill('/user/:id');
    await rules.getByRole('button', { name: 'Add rule' }).click();
    t.equal(await rules.locator('[data-testid=path-rule-error]').count(), 0, 'an empty row is no problem');
    await rules.getByLabel('sample path').fill('/user/42/orders');
    t.equal(await rules.locator('[data-testid=cleaned-path]').textContent(), '/user/:id/orders', 'a sample path cleaned as paths will clean it');
    await s.page.getByRole('button', { name: 'Save', exact: true }).click();
    await s.page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const project = (await s.api.get('/api/projects/@current/')).body;
    t.same(project.test_account_filters, [{ key: 'email', type: 'person', operator: 'not_icontains', value: '@example.com' }]);
    t.same(project.path_cleaning_filters, [{ regex: '/user/\\d+', alias: '/user/:id' }], 'the empty row is not saved');
    await s.page.reload();
    await s.page.locator('[data-testid=path-rule]').first().waitFor();
    t.equal(await s.page.getByLabel('path rule alias 1').inputValue(), '/user/:id', 'read back into the form');
    t.equal(await s.page.locator('[data-testid=test-account-filters]').getByLabel('property value').inputValue(), '@example.com');
    t.same(s.take(), []);
  });

  t.test('account: the keys list shows when each key was last used', async (t) => {
    t.equal((await s.api.get('/api/users/@me/')).status, 200, 'the first key is used');
    await s.page.goto(s.url('/account'));
    await s.page.fill('input[name=key_label]', 'unused key');
    await s.page.getByRole('button', { name: 'Create key' }).click();
    await s.page.waitForSelector('[data-testid=new-key]');
    /** The "Last used" cell of the key labelled `label`. */
    const rowText = (label: string) => s.page.locator('[data-testid=key-list] tr', { hasText: label }).locator('td:nth-child(5)').textContent();
    t.equal(await rowText('unused key'), 'never', 'a key not used yet');
    await eventually('the first key shown as used', async () => {
      await s.page.reload();
      await s.page.waitForSelector('[data-testid=key-list] tbody tr');
      const text = await rowText('Created at first start');
      return text !== null && text !== 'never' && text;
    });
    t.pass('the key the API client used shows its last use');
    t.same(s.take(), []);
  });

  t.test('persons: sorted by the clicked column, searched as you type', async (t) => {
    /** The names in the list once it shows `expected` (the list answers asynchronously). */
    const rowsAre = async (expected: string[], what: string) => {
      const names = await eventually(what, async () => {
        const shown = await s.page.$$eval('[data-testid=person-list] tbody tr td:first-child', (cells) => cells.map((c) => c.textContent ?? ''));
        return JSON.stringify(shown) === JSON.stringify(expected) && shown;
      }).catch(async (error: Error) => {
        t.fail(`${what}: ${error.message}; shown ${JSON.stringify(await s.page.$$eval('[data-testid=person-list] tbody tr td:first-child', (c) => c.map((x) => x.textContent)))}`);
        return null;
      });
      if (names) t.same(names, expected, what);
    };
    const header = (name: string) => s.page.locator('[data-testid=person-list] thead button', { hasText: name });
    const sortOf = (name: string) => s.page.locator('[data-testid=person-list] thead th', { hasText: name }).getAttribute('aria-sort');

    await s.page.goto(s.url(`/project/${s.projectId}/persons`));
    await rowsAre(['anon-zed', 'alice@example.com', 'carol@example.com', 'Bob'], 'by default the newest first');
    t.equal(await sortOf('Created'), 'descending');
    await header('Person').click();
    await rowsAre(['alice@example.com', 'anon-zed', 'Bob', 'carol@example.com'], 'Person: by the name shown (a distinct id when no e-mail or name), A to Z, case aside');
    t.equal(await sortOf('Person'), 'ascending');
    t.match(s.page.url(), /[?&]order=person\b/, 'the order is in the address');
    await header('Person').click();
    await rowsAre(['carol@example.com', 'Bob', 'anon-zed', 'alice@example.com'], 'Person again: Z to A');
    await header('Created').click();
    await rowsAre(['anon-zed', 'alice@example.com', 'carol@example.com', 'Bob'], 'Created: newest first');
    await header('Created').click();
    await rowsAre(['Bob', 'carol@example.com', 'alice@example.com', 'anon-zed'], 'Created again: oldest first');
    t.equal(await sortOf('Created'), 'ascending');

    // No Enter, no leaving the field: the list follows the typing.
    const search = s.page.getByRole('searchbox', { name: 'search persons' });
    await search.pressSequentially('CAR');
    await rowsAre(['carol@example.com'], 'typing searches property values (case aside)');
    t.match(s.page.url(), /[?&]search=CAR\b/, 'the search is in the address');
    await search.fill('');
    await search.pressSequentially('anon');
    await rowsAre(['anon-zed'], 'and distinct ids');
    await search.fill('bo');
    await rowsAre(['Bob'], 'names too');
    await s.page.reload();
    await rowsAre(['Bob'], 'a reload keeps the search and the order');
    t.equal(await search.inputValue(), 'bo');
    t.same(s.take(), []);
  });

  t.test('an address the console has no page for shows a not-found page, not live events', async (t) => {
    for (const path of [`/project/${s.projectId}/nope`, '/nope/deeper', `/project/${s.projectId}/persons/x/y`]) {
      await s.page.goto(s.url(path));
      await s.page.waitForSelector('[data-testid=not-found-page]');
      t.match(await s.page.textContent('[data-testid=not-found-page]'), `/console${path}`, `${path}: named on the page`);
      t.equal(await s.page.locator('[data-testid=events-page]').count(), 0, `${path}: not the live events`);
    }
    await s.page.getByRole('link', { name: 'Go to live events' }).click();
    await s.page.waitForSelector('[data-testid=events-page]');
    for (const path of ['/', `/project/${s.projectId}`]) {
      await s.page.goto(s.url(path));
      await s.page.waitForSelector('[data-testid=web-analytics-page]');
      t.pass(`${path || '/'} leads to web analytics, the landing page`);
    }
    t.same(s.take(), []);
  });
}
