// The console's SQL editor in headless Chromium (issue 53.1): HogQL typed into the CodeMirror editor, completion of
// the project's property names, the answer equal to /query/'s for the same text, an error marked where it points,
// charts and a number, the history kept across a reload, and a SQL insight saved, reopened and drawn on a dashboard.
import t from 'tap';
import { chromiumUnavailable, settledReading } from '../helpers/chromium.js';
import { consoleSuite } from '../helpers/console-suite.js';
import { event, sendBatch } from '../helpers/ingest.js';
import { missing } from '../helpers/required-environment.js';

const PASSWORD = 'console-sql-password';
const BY_BROWSER = 'SELECT properties.$browser AS browser, count() AS views FROM events WHERE event = \'$pageview\' GROUP BY browser ORDER BY views DESC';

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the console SQL browser suite', unavailable);
else suite();

function suite(): void {
  const s = consoleSuite(t, {
    password: PASSWORD,
    viewport: { width: 1280, height: 900 },
    async seed({ q }) {
      const batch = [];
      for (let i = 0; i < 12; i++) batch.push(event(`sql-visitor-${i % 4}`, '$pageview', { $browser: i % 3 === 0 ? 'Safari' : 'Chrome', plan_tier: 'gold' }, { timestamp: new Date(Date.now() - (i + 1) * 3_600_000).toISOString() }));
      batch.push(event('sql-visitor-0', 'signed up', { $set: { email: 'sql@example.com' } }));
      if ((await sendBatch(q.base, batch)).status !== 200) throw new Error('dataset');
    },
  });

  /** Replaces the editor's text as a user would: select all, type. */
  const typeQuery = async (text: string) => {
    await s.page.locator('[data-testid=sql-editor] .cm-content').click();
    await s.page.keyboard.press('Control+A');
    await s.page.keyboard.press('Delete');
    await s.page.keyboard.insertText(text);
  };
  const hogql = async (query: string) => {
    const res = await s.api.post(`/api/projects/${s.projectId}/query/`, { query: { kind: 'HogQLQuery', query } });
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    return res.body as { columns: string[]; results: unknown[][] };
  };
  const tableRows = () => s.page.$$eval('[data-testid=sql-table] tbody tr', (rows) => rows.map((r) => Array.from(r.children, (c) => c.textContent ?? '')));

  t.test('a query typed in the editor answers what /query/ answers; completion offers the project\'s properties', async (t) => {
    await s.page.goto(s.url(`/project/${s.projectId}/sql`));
    await s.page.locator('[data-testid=sql-editor] .cm-content').waitFor();
    await typeQuery('SELECT properties.plan');
    const options = s.page.locator('.cm-tooltip-autocomplete li');
    await options.first().waitFor();
    t.ok((await options.allTextContents()).some((o) => o.includes('plan_tier')), 'an event property seen in this project');
    await s.page.keyboard.press('Escape');

    // HogQL's functions complete; choosing one opens its call.
    await typeQuery('SELECT toStartOfD');
    await options.first().waitFor();
    t.ok((await options.allTextContents()).some((o) => o.includes('toStartOfDay')), 'a HogQL function');
    await s.page.locator('.cm-tooltip-autocomplete li', { hasText: 'toStartOfDay' }).first().click();
    const editor = s.page.locator('[data-testid=sql-editor] .cm-content');
    t.equal(await settledReading(() => editor.textContent(), (text) => text === 'SELECT toStartOfDay()'), 'SELECT toStartOfDay()', 'inserted as a call');
    await s.page.keyboard.insertText('timestamp');
    t.equal(await s.page.locator('[data-testid=sql-editor] .cm-content').textContent(), 'SELECT toStartOfDay(timestamp)', 'the cursor between its parentheses');
    await typeQuery('SELECT countI');
    await options.first().waitFor();
    t.ok((await options.allTextContents()).some((o) => o.includes('countIf')), 'an aggregate with -If');
    await s.page.keyboard.press('Escape');

    await typeQuery(BY_BROWSER);
    await s.page.keyboard.press('Control+Enter');
    await s.page.locator('[data-testid=sql-table]').waitFor();
    const expected = await hogql(BY_BROWSER);
    t.same(await s.page.locator('[data-testid=sql-table] thead th').allTextContents(), expected.columns);
    t.same(await tableRows(), expected.results.map((r) => r.map(String)), 'every row as the API answers it');
    t.same(expected.results, [['Chrome', 8], ['Safari', 4]]);
    t.same(s.take(), []);
  });

  t.test('an error is shown with the place it points at marked in the query', async (t) => {
    await typeQuery('SELECT # FROM events');
    await s.page.getByRole('button', { name: 'Run', exact: true }).click();
    const alert = s.page.locator('[data-testid=sql-page] [role=alert]');
    await alert.waitFor();
    t.match(await alert.textContent(), /Unexpected character "#" at position 7/);
    t.equal(await s.page.textContent('[data-testid=sql-error-position]'), 'Marked in the query at character 7.');
    t.equal(await s.page.locator('.cm-hogql-error').first().textContent(), '# FROM events', 'marked from the position to the end of its line');
    t.equal(await s.page.locator('[data-testid=sql-result]').getAttribute('data-stale'), 'true', 'the previous answer is dimmed');
    t.same(s.take(), [], 'the refusal comes in the async query\'s status, not as a failed request');
  });

  t.test('Cancel stops the query on the page and deletes it on the node', async (t) => {
    await typeQuery(BY_BROWSER);
    const accepted = s.page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/query/'));
    const deleted = s.page.waitForRequest((r) => r.method() === 'DELETE' && r.url().includes('/query/'));
    await s.page.getByRole('button', { name: 'Run', exact: true }).click();
    const answer = await accepted;
    t.equal(answer.status(), 202, 'the editor asks as an async query');
    const id = (await answer.json()).query_status.id as string;
    await s.page.getByRole('button', { name: 'Cancel', exact: true }).click();
    t.ok((await deleted).url().endsWith(`/query/${id}/`), 'Cancel deletes that query on the node');
    t.equal(await s.page.locator('[data-testid=sql-page] [role=alert]').textContent(), 'Cancelled.');
    await s.page.waitForFunction(() => !Array.from(document.querySelectorAll('button')).some((b) => b.textContent === 'Cancel'));
    t.match((await s.api.get(`/api/projects/${s.projectId}/query/${id}/`)).body, { query_status: { id, cancelled: true } }, 'its status says so');
    t.same(s.take(), []);
  });

  t.test('the answer as bars and as a number', async (t) => {
    await typeQuery(BY_BROWSER);
    await s.page.getByLabel('display').selectOption('ActionsBar');
    await s.page.getByRole('button', { name: 'Run', exact: true }).click();
    await s.page.locator('[data-testid=sql-chart][data-x-ticks]').waitFor();
    t.equal(await s.page.locator('[data-testid=sql-chart]').getAttribute('data-points'), '2', 'a bar per browser');
    await typeQuery("SELECT count() FROM events WHERE event = '$pageview'");
    await s.page.getByLabel('display').selectOption('BoldNumber');
    await s.page.getByRole('button', { name: 'Run', exact: true }).click();
    await s.page.waitForFunction(() => document.querySelector('[data-testid=sql-number] strong')?.textContent === '12');
    t.pass('the count as a number');
    t.same(s.take(), []);
  });

  t.test('the history keeps each query run, newest first, across a reload', async (t) => {
    await s.page.reload();
    await s.page.locator('[data-testid=sql-history] summary').click();
    const items = await s.page.locator('[data-testid=sql-history] li').allTextContents();
    t.equal(items[0], "SELECT count() FROM events WHERE event = '$pageview'");
    t.ok(items.some((i) => i.startsWith(BY_BROWSER.slice(0, 100))), 'the earlier one (a long query is cut in the list)');
    t.notOk(items.some((i) => i.includes('#')), 'a query that failed is not kept');
    await s.page.locator('[data-testid=sql-history] li button').nth(1).click();
    const editor = s.page.locator('[data-testid=sql-editor] .cm-content');
    t.match(await settledReading(() => editor.textContent(), (text) => /GROUP BY browser/.test(text ?? '')), /GROUP BY browser/, 'a history entry goes back into the editor');
    t.same(s.take(), []);
  });

  t.test('saved as an insight it reopens with its query and display, and a dashboard draws it', async (t) => {
    await typeQuery(BY_BROWSER);
    await s.page.getByLabel('display').selectOption('ActionsTable');
    await s.page.getByLabel('insight name').fill('Views by browser');
    await s.page.getByRole('button', { name: 'Save as insight' }).click();
    await s.page.waitForURL(/\/insights\/saved\/\d+$/);
    const id = Number(s.page.url().split('/').pop());
    const stored = (await s.api.get(`/api/projects/${s.projectId}/insights/${id}/`)).body;
    t.same(stored.query, { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: BY_BROWSER }, display: 'ActionsTable' });
    t.same(stored.result, [['Chrome', 8], ['Safari', 4]], 'the insight API computes it');
    await s.page.locator('[data-testid=sql-table]').waitFor();
    t.match(await s.page.locator('[data-testid=sql-editor] .cm-content').textContent(), /GROUP BY browser/, 'reopened with its query');
    t.same(await tableRows(), [['Chrome', '8'], ['Safari', '4']], 'and run');

    const dashboard = await s.api.post(`/api/projects/${s.projectId}/dashboards/`, { name: 'SQL board' });
    t.equal((await s.api.patch(`/api/projects/${s.projectId}/insights/${id}/`, { dashboards: [dashboard.body.id] })).status, 200);
    await s.page.goto(s.url(`/project/${s.projectId}/dashboard/${dashboard.body.id}`));
    const tile = s.page.locator('[data-testid=dashboard-tile]');
    await tile.locator('[data-testid=sql-table]').waitFor();
    t.equal(await tile.locator('[data-testid=tile-kind]').textContent(), 'SQL');
    t.same(await tile.locator('[data-testid=sql-table] tbody tr').evaluateAll((rows) => rows.map((r) => Array.from(r.children, (c) => c.textContent ?? ''))), [['Chrome', '8'], ['Safari', '4']]);
    t.same(s.take(), []);
  });
}
