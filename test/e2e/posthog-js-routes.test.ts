// What posthog-js asks of its api_host besides events and flags (src/front/README.md, "What posthog-js sends"),
// over HTTP against the real server: the remote-config keys of its optional modules, defaulted as PostHog defaults
// a new project and switched through the project's settings, in every answer that carries them (config, config.js,
// /flags/?config=true, /decide/); the empty survey, early-access, web-experiment and product-tour lists in PostHog's
// shapes (not a 404) with the token checked; every extension bundle array.js loads from /static/, GET and HEAD.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { PROJECT_KEY, ROOT, quillForFile } from '../helpers/quill.js';

const VERSION: string = JSON.parse(readFileSync(`${ROOT}/node_modules/posthog-js/package.json`, 'utf8')).version;
const server = quillForFile(t);
const ORIGIN = 'http://site.example';

/** The module fields of a config answer. */
const moduleFields = (c: Record<string, unknown>) => ({
  autocapture_opt_out: c.autocapture_opt_out, autocaptureExceptions: c.autocaptureExceptions, errorTracking: c.errorTracking,
  capturePerformance: c.capturePerformance, captureDeadClicks: c.captureDeadClicks, heatmaps: c.heatmaps, surveys: c.surveys,
});

/** Every answer that carries the remote config, as posthog-js reads it (config.js: the object it assigns). */
async function configs(): Promise<Record<string, Record<string, unknown>>> {
  const anonymous = server.api.withKey(null);
  const json = (await anonymous.get(`/array/${PROJECT_KEY}/config`)).body;
  const script = (await anonymous.get(`/array/${PROJECT_KEY}/config.js`)).text;
  const window: { _POSTHOG_REMOTE_CONFIG?: Record<string, { config: Record<string, unknown> }> } = {};
  new Function('window', script)(window);
  const flags = (await anonymous.post('/flags/?v=2&config=true', { token: PROJECT_KEY, distinct_id: 'someone' })).body;
  const decide = (await anonymous.post('/decide/?v=4', { token: PROJECT_KEY, distinct_id: 'someone' })).body;
  return { json, script: window._POSTHOG_REMOTE_CONFIG![PROJECT_KEY]!.config, flags, decide };
}

t.test("a new project: PostHog's defaults in every config answer", async (t) => {
  const want = {
    autocapture_opt_out: false, autocaptureExceptions: false, errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
    capturePerformance: { network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null }, captureDeadClicks: false, heatmaps: false, surveys: false,
  };
  for (const [name, config] of Object.entries(await configs())) t.same(moduleFields(config), want, name);
  const project = (await server.api.get('/api/projects/@current/')).body;
  t.match(project, {
    autocapture_opt_out: false, autocapture_exceptions_opt_in: false, autocapture_web_vitals_opt_in: false, autocapture_web_vitals_allowed_metrics: null,
    capture_performance_opt_in: true, capture_dead_clicks: false, heatmaps_opt_in: false, surveys_opt_in: false,
  }, 'the project shows the settings with their defaults');
  const decideGet = (await server.api.withKey(null).get('/decide/')).body;
  t.same(moduleFields(decideGet), want, 'GET /decide/ (no project): the defaults');
});

t.test('the settings switch the modules on, in every answer at once; a bad value is refused by name', async (t) => {
  const on = {
    heatmaps_opt_in: true, capture_dead_clicks: true, autocapture_exceptions_opt_in: true, autocapture_web_vitals_opt_in: true,
    autocapture_web_vitals_allowed_metrics: ['LCP', 'CLS', 'FCP', 'INP'], surveys_opt_in: true,
  };
  const patched = await server.api.patch('/api/projects/@current/', on);
  t.equal(patched.status, 200, patched.text);
  t.match(patched.body, on, 'the answer shows them');
  const want = {
    autocapture_opt_out: false, autocaptureExceptions: true, errorTracking: { autocaptureExceptions: true, suppressionRules: [] },
    capturePerformance: { network_timing: true, web_vitals: true, web_vitals_allowed_metrics: ['LCP', 'CLS', 'FCP', 'INP'] },
    captureDeadClicks: true, heatmaps: true, surveys: [],
  };
  for (const [name, config] of Object.entries(await configs())) t.same(moduleFields(config), want, name);

  for (const [body, attr, code] of [
    [{ heatmaps_opt_in: 'on' }, 'heatmaps_opt_in', 'invalid'],
    [{ autocapture_web_vitals_allowed_metrics: ['TTFB'] }, 'autocapture_web_vitals_allowed_metrics', 'invalid_choice'],
    [{ capture_dead_clicks: 1 }, 'capture_dead_clicks', 'invalid'],
  ] as const) {
    const res = await server.api.patch('/api/projects/@current/', body);
    t.match(res, { status: 400, body: { type: 'validation_error', code, attr } }, `${JSON.stringify(body)} refused`);
  }
  t.equal((await configs()).json.heatmaps, true, 'a refused PATCH changed nothing');

  const off = await server.api.patch('/api/projects/@current/', { heatmaps_opt_in: false, capture_performance_opt_in: false, autocapture_web_vitals_opt_in: null });
  t.equal(off.status, 200);
  const after = await configs();
  for (const [name, config] of Object.entries(after)) {
    t.equal(config.heatmaps, false, `${name}: heatmaps off`);
    t.equal(config.capturePerformance, false, `${name}: neither network timing nor web vitals: false`);
    t.equal(config.captureDeadClicks, true, `${name}: the other switches kept`);
  }
});

t.test('the lists posthog-js asks for: empty, in PostHog\'s shapes, readable cross-origin, the token checked', async (t) => {
  const anonymous = server.api.withKey(null);
  for (const [path, key] of [['/api/surveys/', 'surveys'], ['/api/early_access_features/', 'earlyAccessFeatures'], ['/api/web_experiments/', 'experiments'], ['/api/product_tours/', 'product_tours']] as const) {
    // As posthog-js asks: the token and a cache-busting timestamp in the query.
    const res = await anonymous.get(`${path}?token=${PROJECT_KEY}&_=${Date.now()}`, { origin: ORIGIN });
    t.equal(res.status, 200, path);
    t.same(res.body, { [key]: [] }, `${path}: {"${key}": []}`);
    const allow = res.headers.get('access-control-allow-origin');
    t.ok(allow === '*' || allow === ORIGIN, `${path}: readable by the page (${allow})`);
    t.equal((await anonymous.get(`${path.slice(0, -1)}?token=${PROJECT_KEY}`)).status, 200, `${path} without the trailing slash`);
    t.match(await anonymous.get(path), { status: 401, body: { type: 'authentication_error', code: 'missing_api_key', attr: null } }, `${path}: no token`);
    t.match(await anonymous.get(`${path}?token=phc_nope`), { status: 401, body: { code: 'invalid_api_key' } }, `${path}: an unknown token`);
  }
});

t.test('every extension array.js loads lazily is served from /static/<version>/, GET and HEAD', async (t) => {
  // The names posthog-js passes to loadExternalDependency (lib/src of the installed version), each loaded as
  // `<assets host>/static/<version>/<name>.js` (strict_script_versioning's default 'fallback' path).
  const extensions = [
    'surveys', 'web-vitals', 'web-vitals-with-attribution', 'web-vitals-soft-navs', 'web-vitals-with-attribution-soft-navs',
    'dead-clicks-autocapture', 'exception-autocapture', 'recorder', 'lazy-recorder', 'posthog-recorder', 'tracing-headers',
    'product-tours', 'conversations', 'logs', 'intercom-integration', 'crisp-chat-integration',
  ];
  for (const name of extensions) {
    const get = await fetch(`${server.q.base}/static/${VERSION}/${name}.js`, { headers: { origin: ORIGIN } });
    const body = Buffer.from(await get.arrayBuffer());
    t.equal(get.status, 200, `${name}.js`);
    t.match(get.headers.get('content-type'), /^application\/javascript/);
    t.ok(body.equals(readFileSync(`${ROOT}/node_modules/posthog-js/dist/${name}.js`)), `${name}.js: the package's bytes`);
    const head = await fetch(`${server.q.base}/static/${VERSION}/${name}.js`, { method: 'HEAD' });
    t.equal(head.status, 200, `HEAD ${name}.js`);
    t.equal(head.headers.get('etag'), get.headers.get('etag'), `HEAD ${name}.js: the GET's validator`);
  }
  // The toolbar is PostHog's app, not part of posthog-js: launched from PostHog's UI only, never by default.
  t.equal((await fetch(`${server.q.base}/static/toolbar.js`)).status, 404, 'toolbar.js: not served (see src/front/README.md)');
});
