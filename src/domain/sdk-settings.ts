/**
 * The project settings that switch posthog-js's optional modules on and off from the server, and the remote-config
 * fields posthog-js reads them from (`/array/:token/config`, `config.js`, and `/flags/?config=true` and `/decide/`).
 *
 * The settings carry PostHog's project (team) field names and defaults, so a project moved from PostHog keeps its
 * switches through `PATCH /api/projects/:id/`. What each field turns into is PostHog's remote config as it answers
 * today; posthog-js reads each key only when present, and an explicit client option (`capture_heatmaps`,
 * `capture_dead_clicks`, `capture_exceptions`, `capture_performance`, …) wins over it.
 *
 * Pure: no I/O. The worker computes a project's fields once per project version (src/worker/ops/decide.ts), so the
 * flag path pays one map lookup for them.
 */

/** Web vitals posthog-js can report (`web_vitals_allowed_metrics`; null means all of them). */
export const WEB_VITALS = ['CLS', 'FCP', 'INP', 'LCP'] as const;
export type WebVital = (typeof WEB_VITALS)[number];

export interface SdkSettings {
  /** Autocapture off for every client that does not set `autocapture` itself. */
  autocapture_opt_out: boolean | null;
  /** `$exception` events for uncaught errors and unhandled rejections (loads exception-autocapture.js). */
  autocapture_exceptions_opt_in: boolean | null;
  /** `$web_vitals` events (loads web-vitals.js). */
  autocapture_web_vitals_opt_in: boolean | null;
  autocapture_web_vitals_allowed_metrics: WebVital[] | null;
  /** Network timing in recordings: PostHog's default is on (it matters only once recordings are). */
  capture_performance_opt_in: boolean | null;
  /** `$dead_click` events (loads dead-clicks-autocapture.js). */
  capture_dead_clicks: boolean | null;
  /** `$$heatmap` events: click, rage-click and mouse-move positions per page. */
  heatmaps_opt_in: boolean | null;
  /** Surveys: Quill stores none, so this only tells posthog-js an (empty) survey list is there to ask for. */
  surveys_opt_in: boolean | null;
}

/** PostHog's defaults for a new project (its Team model). */
export const SDK_SETTING_DEFAULTS: Readonly<SdkSettings> = Object.freeze({
  autocapture_opt_out: false,
  autocapture_exceptions_opt_in: false,
  autocapture_web_vitals_opt_in: false,
  autocapture_web_vitals_allowed_metrics: null,
  capture_performance_opt_in: true,
  capture_dead_clicks: false,
  heatmaps_opt_in: false,
  surveys_opt_in: false,
});

export const SDK_SETTING_NAMES = Object.keys(SDK_SETTING_DEFAULTS) as (keyof SdkSettings)[];

/** A project's settings: what it stored over the defaults (projects created before these settings stored none). */
export function sdkSettingsOf(stored: Partial<SdkSettings> | undefined): SdkSettings {
  return { ...SDK_SETTING_DEFAULTS, ...stored };
}

/** Why a PATCH's value is refused, in the API's error fields (worded as Django REST framework's fields are). */
export interface SettingRefusal {
  attr: keyof SdkSettings;
  code: string;
  detail: string;
}

/**
 * The settings a PATCH body changes: each present field checked (booleans or null; the allowed metrics null or a
 * list of WEB_VITALS names, kept unique in their order). The first bad field is returned as a refusal.
 */
export function settingsFromPatch(body: Record<string, unknown>): { changes: Partial<SdkSettings> } | { refusal: SettingRefusal } {
  const changes: Record<string, unknown> = {};
  for (const name of SDK_SETTING_NAMES) {
    if (!(name in body)) continue;
    const value = body[name];
    if (name === 'autocapture_web_vitals_allowed_metrics') {
      if (value === null) {
        changes[name] = null;
        continue;
      }
      if (!Array.isArray(value)) return { refusal: { attr: name, code: 'not_a_list', detail: `Expected a list of items but got type "${typeof value}".` } };
      const bad = value.find((v) => !(WEB_VITALS as readonly unknown[]).includes(v));
      if (bad !== undefined) return { refusal: { attr: name, code: 'invalid_choice', detail: `"${String(bad)}" is not a valid choice.` } };
      changes[name] = [...new Set(value as WebVital[])];
      continue;
    }
    if (value !== null && typeof value !== 'boolean') return { refusal: { attr: name, code: 'invalid', detail: 'Must be a valid boolean.' } };
    changes[name] = value;
  }
  return { changes: changes as Partial<SdkSettings> };
}

/**
 * The remote-config fields posthog-js reads for its optional modules, as PostHog derives them from the same
 * settings. Session recording is not among them (its own fields).
 */
export function moduleConfigFields(s: SdkSettings): Record<string, unknown> {
  const exceptions = s.autocapture_exceptions_opt_in === true;
  const webVitals = s.autocapture_web_vitals_opt_in === true;
  const networkTiming = s.capture_performance_opt_in === true;
  return {
    autocapture_opt_out: s.autocapture_opt_out === true,
    // Both keys: posthog-js reads `autocaptureExceptions` to start the observer and `errorTracking` for its rules.
    autocaptureExceptions: exceptions,
    errorTracking: { autocaptureExceptions: exceptions, suppressionRules: [] },
    // An object once either part is on: posthog-js reads `web_vitals` (and the allowed metrics) from it.
    capturePerformance: networkTiming || webVitals
      ? { network_timing: networkTiming, web_vitals: webVitals, web_vitals_allowed_metrics: s.autocapture_web_vitals_allowed_metrics }
      : false,
    captureDeadClicks: s.capture_dead_clicks === true,
    heatmaps: s.heatmaps_opt_in === true,
    // PostHog sends the project's surveys once they are on (false otherwise); Quill has none to send, and posthog-js
    // treats an empty list as "surveys off" while still answering getSurveys() from `/api/surveys/`.
    surveys: s.surveys_opt_in === true ? [] : false,
  };
}
