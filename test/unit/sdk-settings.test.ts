// posthog-js's module switches (src/domain/sdk-settings.ts): PostHog's defaults, what a PATCH may set, and the
// remote-config fields they become, in the shapes PostHog's remote config answers today.
import t from 'tap';
import { moduleConfigFields, SDK_SETTING_DEFAULTS, sdkSettingsOf, settingsFromPatch } from '../../src/domain/sdk-settings.js';

t.test("a project without settings: PostHog's defaults for a new project", async (t) => {
  t.same(moduleConfigFields(sdkSettingsOf(undefined)), {
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
    // PostHog's Team has capture_performance_opt_in on by default: network timing for recordings, no web vitals.
    capturePerformance: { network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null },
    captureDeadClicks: false,
    heatmaps: false,
    surveys: false,
  });
});

t.test('every module on', async (t) => {
  const s = sdkSettingsOf({
    autocapture_exceptions_opt_in: true, autocapture_web_vitals_opt_in: true, autocapture_web_vitals_allowed_metrics: ['LCP', 'CLS'],
    capture_dead_clicks: true, heatmaps_opt_in: true, surveys_opt_in: true, autocapture_opt_out: true,
  });
  t.same(moduleConfigFields(s), {
    autocapture_opt_out: true,
    autocaptureExceptions: true,
    errorTracking: { autocaptureExceptions: true, suppressionRules: [] },
    capturePerformance: { network_timing: true, web_vitals: true, web_vitals_allowed_metrics: ['LCP', 'CLS'] },
    captureDeadClicks: true,
    heatmaps: true,
    surveys: [],
  });
});

t.test('performance: false once neither network timing nor web vitals is on; null counts as off', async (t) => {
  t.equal(moduleConfigFields(sdkSettingsOf({ capture_performance_opt_in: false })).capturePerformance, false);
  t.same(moduleConfigFields(sdkSettingsOf({ capture_performance_opt_in: null, autocapture_web_vitals_opt_in: true })).capturePerformance,
    { network_timing: false, web_vitals: true, web_vitals_allowed_metrics: null });
  t.equal(moduleConfigFields(sdkSettingsOf({ heatmaps_opt_in: null })).heatmaps, false);
});

t.test('a PATCH: booleans or null, the metrics a list of CLS/FCP/INP/LCP or null; other fields ignored', async (t) => {
  t.same(settingsFromPatch({ name: 'x', heatmaps_opt_in: true, capture_dead_clicks: null }), { changes: { heatmaps_opt_in: true, capture_dead_clicks: null } });
  t.same(settingsFromPatch({}), { changes: {} });
  t.same(settingsFromPatch({ autocapture_web_vitals_allowed_metrics: ['LCP', 'CLS', 'LCP'] }), { changes: { autocapture_web_vitals_allowed_metrics: ['LCP', 'CLS'] } }, 'kept once each, in order');
  t.same(settingsFromPatch({ autocapture_web_vitals_allowed_metrics: null }), { changes: { autocapture_web_vitals_allowed_metrics: null } });
  t.same(settingsFromPatch({ heatmaps_opt_in: 'yes' }), { refusal: { attr: 'heatmaps_opt_in', code: 'invalid', detail: 'Must be a valid boolean.' } });
  t.same(settingsFromPatch({ autocapture_web_vitals_allowed_metrics: ['TTFB'] }),
    { refusal: { attr: 'autocapture_web_vitals_allowed_metrics', code: 'invalid_choice', detail: '"TTFB" is not a valid choice.' } });
  t.same(settingsFromPatch({ autocapture_web_vitals_allowed_metrics: 'LCP' }),
    { refusal: { attr: 'autocapture_web_vitals_allowed_metrics', code: 'not_a_list', detail: 'Expected a list of items but got type "string".' } });
  t.ok(Object.isFrozen(SDK_SETTING_DEFAULTS), 'the defaults cannot be changed by a caller');
});
