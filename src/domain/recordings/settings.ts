/**
 * A project's session-recording settings: PostHog's team fields (read and written through `PATCH
 * /api/projects/:id/` under their PostHog names) and what they tell posthog-js, as the `sessionRecording` member of
 * the remote config and of `/flags/` (posthog/models/remote_config.py builds the same object from the same fields).
 * Pure: parsing, defaults and the config object.
 */
import { AnalyticsInputError } from '../analytics/errors.js';

/** A 400 naming the field (the ops layer answers AnalyticsInputError as a validation error: src/worker/reply.ts). */
const refused = (attr: string, code: string, detail: string) => new AnalyticsInputError(attr, detail, code);

/** `session_recording_linked_flag`: record only when this flag (or one of its variants) is on for the visitor. */
export interface LinkedFlag {
  id: number | null;
  key: string;
  variant: string | null;
}

export interface RecordingSettings {
  /** `session_recording_opt_in`: off by default, as in PostHog. */
  enabled: boolean;
  /** `session_recording_sample_rate`, "0.00".."1.00" as PostHog's DecimalField answers it; null records everyone. */
  sampleRate: string | null;
  /** `session_recording_minimum_duration_milliseconds`: shorter sessions are not sent (0..30000); null: no minimum. */
  minimumDurationMs: number | null;
  linkedFlag: LinkedFlag | null;
  /** `capture_console_log_opt_in`: console lines in the recording (PostHog's default for new teams: on). */
  consoleLogs: boolean;
  /** `session_recording_network_payload_capture_config`: request/response headers and bodies; null: neither. */
  network: { recordHeaders: boolean; recordBody: boolean } | null;
  /**
   * `session_recording_masking_config`; null leaves posthog-js' default, which masks every input (rrweb's
   * `maskAllInputs: true`) and no other text.
   */
  masking: { maskAllInputs?: boolean; maskTextSelector?: string; blockSelector?: string } | null;
  /** `session_replay_config.record_canvas`: off, as in PostHog. */
  recordCanvas: boolean;
  /** Quill's `recording_retention_days`: recordings older than this are deleted (src/worker/recordings/). */
  retentionDays: number;
}

export const DEFAULT_RETENTION_DAYS = 30;
export const MAX_RETENTION_DAYS = 3_650;
/** PostHog caps the minimum duration at 30 s (its settings offer 1-30 s). */
export const MAX_MINIMUM_DURATION_MS = 30_000;

export const DEFAULT_RECORDING_SETTINGS: Readonly<RecordingSettings> = Object.freeze({
  enabled: false,
  sampleRate: null,
  minimumDurationMs: null,
  linkedFlag: null,
  consoleLogs: true,
  network: null,
  masking: null,
  recordCanvas: false,
  retentionDays: DEFAULT_RETENTION_DAYS,
});

/** A project's settings, with the defaults for what it never set (projects made before recordings had none). */
export function recordingSettingsOf(stored: Partial<RecordingSettings> | undefined): RecordingSettings {
  return { ...DEFAULT_RECORDING_SETTINGS, ...(stored ?? {}) };
}

/** The field names of a project, as PostHog's team serializer names them, in the order they are answered. */
export const RECORDING_FIELDS = [
  'session_recording_opt_in',
  'session_recording_sample_rate',
  'session_recording_minimum_duration_milliseconds',
  'session_recording_linked_flag',
  'capture_console_log_opt_in',
  'session_recording_network_payload_capture_config',
  'session_recording_masking_config',
  'session_replay_config',
  'recording_retention_days',
  'session_recording_retention_period',
] as const;

/** PostHog's `session_recording_retention_period` choices, in days (read and answered beside Quill's days). */
const RETENTION_PERIODS: Record<string, number> = { '30d': 30, '90d': 90, '1y': 365, '5y': 1_825 };

/** The settings as a project answers them (the fields above). */
export function serializeRecordingSettings(s: RecordingSettings): Record<(typeof RECORDING_FIELDS)[number], unknown> {
  return {
    session_recording_opt_in: s.enabled,
    session_recording_sample_rate: s.sampleRate,
    session_recording_minimum_duration_milliseconds: s.minimumDurationMs,
    session_recording_linked_flag: s.linkedFlag,
    capture_console_log_opt_in: s.consoleLogs,
    session_recording_network_payload_capture_config: s.network,
    session_recording_masking_config: s.masking,
    session_replay_config: { record_canvas: s.recordCanvas },
    recording_retention_days: s.retentionDays,
    session_recording_retention_period: Object.entries(RETENTION_PERIODS).find(([, days]) => days === s.retentionDays)?.[0] ?? null,
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function bool(attr: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw refused(attr, 'invalid', 'Must be a valid boolean.');
  return v;
}

function sampleRateOf(v: unknown): string | null {
  if (v === null) return null;
  const n = typeof v === 'string' && /^\s*\d*(\.\d*)?\s*$/.test(v) && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw refused('session_recording_sample_rate', 'invalid', 'A valid number is required.');
  if (n < 0 || n > 1) throw refused('session_recording_sample_rate', 'invalid_input', 'Must be between 0 and 1.');
  if (Math.round(n * 100) !== n * 100 && Math.abs(Math.round(n * 100) - n * 100) > 1e-9) {
    throw refused('session_recording_sample_rate', 'max_decimal_places', 'Ensure that there are no more than 2 decimal places.');
  }
  return n.toFixed(2);
}

function minimumDurationOf(v: unknown): number | null {
  if (v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw refused('session_recording_minimum_duration_milliseconds', 'invalid', 'A valid integer is required.');
  if (v < 0 || v > MAX_MINIMUM_DURATION_MS) {
    throw refused('session_recording_minimum_duration_milliseconds', 'invalid_input', `Must be between 0 and ${MAX_MINIMUM_DURATION_MS}.`);
  }
  return v;
}

function linkedFlagOf(v: unknown): LinkedFlag | null {
  const attr = 'session_recording_linked_flag';
  if (v === null) return null;
  if (!isObject(v) || typeof v.key !== 'string' || v.key === '') throw refused(attr, 'invalid_input', 'Must be null or an object with a flag key: {"id", "key", "variant"}.');
  if (v.id !== undefined && v.id !== null && !Number.isInteger(v.id)) throw refused(attr, 'invalid_input', 'id must be an integer.');
  if (v.variant !== undefined && v.variant !== null && typeof v.variant !== 'string') throw refused(attr, 'invalid_input', 'variant must be a string.');
  return { id: (v.id as number | undefined) ?? null, key: v.key, variant: (v.variant as string | undefined) ?? null };
}

function networkOf(v: unknown): RecordingSettings['network'] {
  const attr = 'session_recording_network_payload_capture_config';
  if (v === null) return null;
  if (!isObject(v)) throw refused(attr, 'invalid_input', 'Must be null or {"recordHeaders", "recordBody"}.');
  return { recordHeaders: v.recordHeaders === undefined ? false : bool(attr, v.recordHeaders), recordBody: v.recordBody === undefined ? false : bool(attr, v.recordBody) };
}

function maskingOf(v: unknown): RecordingSettings['masking'] {
  const attr = 'session_recording_masking_config';
  if (v === null) return null;
  if (!isObject(v)) throw refused(attr, 'invalid_input', 'Must be null or {"maskAllInputs", "maskTextSelector", "blockSelector"}.');
  const out: NonNullable<RecordingSettings['masking']> = {};
  if (v.maskAllInputs !== undefined) out.maskAllInputs = bool(attr, v.maskAllInputs);
  for (const key of ['maskTextSelector', 'blockSelector'] as const) {
    const s = v[key];
    if (s === undefined || s === null) continue;
    if (typeof s !== 'string' || s.length > 1000) throw refused(attr, 'invalid_input', `${key} must be a CSS selector (a string of at most 1000 characters).`);
    out[key] = s;
  }
  return out;
}

function retentionOf(v: unknown): number {
  const n = typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw refused('recording_retention_days', 'invalid', 'A valid integer is required.');
  if (n < 1 || n > MAX_RETENTION_DAYS) throw refused('recording_retention_days', 'invalid_input', `Must be between 1 and ${MAX_RETENTION_DAYS}.`);
  return n;
}

/**
 * The settings after a PATCH body (only the recording fields are read; absent ones keep their value). Throws a
 * 400 naming the first invalid field.
 */
export function applyRecordingSettings(current: RecordingSettings, body: Record<string, unknown>): RecordingSettings {
  const next = { ...current };
  if (body.session_recording_opt_in !== undefined) next.enabled = bool('session_recording_opt_in', body.session_recording_opt_in);
  if (body.session_recording_sample_rate !== undefined) next.sampleRate = sampleRateOf(body.session_recording_sample_rate);
  if (body.session_recording_minimum_duration_milliseconds !== undefined) next.minimumDurationMs = minimumDurationOf(body.session_recording_minimum_duration_milliseconds);
  if (body.session_recording_linked_flag !== undefined) next.linkedFlag = linkedFlagOf(body.session_recording_linked_flag);
  if (body.capture_console_log_opt_in !== undefined) next.consoleLogs = bool('capture_console_log_opt_in', body.capture_console_log_opt_in);
  if (body.session_recording_network_payload_capture_config !== undefined) next.network = networkOf(body.session_recording_network_payload_capture_config);
  if (body.session_recording_masking_config !== undefined) next.masking = maskingOf(body.session_recording_masking_config);
  if (body.session_replay_config !== undefined) {
    const v = body.session_replay_config;
    if (v !== null && !isObject(v)) throw refused('session_replay_config', 'invalid_input', 'Must be null or {"record_canvas"}.');
    next.recordCanvas = v === null || v.record_canvas === undefined ? false : bool('session_replay_config', v.record_canvas);
  }
  if (body.session_recording_retention_period !== undefined) {
    const days = RETENTION_PERIODS[String(body.session_recording_retention_period)];
    if (days === undefined) throw refused('session_recording_retention_period', 'invalid_choice', `"${String(body.session_recording_retention_period)}" is not a valid choice.`);
    next.retentionDays = days;
  }
  if (body.recording_retention_days !== undefined) next.retentionDays = retentionOf(body.recording_retention_days);
  return next;
}

/** Whether a PATCH body names any recording field (the caller then stores the settings). */
export function touchesRecordingSettings(body: Record<string, unknown>): boolean {
  return RECORDING_FIELDS.some((f) => body[f] !== undefined);
}

/** The path posthog-js posts snapshots to (its default too; PostHog's remote config names it). */
export const RECORDING_ENDPOINT = '/s/';

/**
 * `sessionRecording` of the remote config and of `/flags/`: false while recording is off, else the object
 * posthog-js reads (SessionRecordingRemoteConfig in @posthog/browser-common). A sample rate of 1 is sent as null,
 * as PostHog does. No `scriptConfig`: posthog-js then lazy-loads its default recorder bundle (`lazy-recorder.js`)
 * from `/static/` of its api_host, which Quill serves (src/front/static-assets.ts).
 */
export function sessionRecordingConfig(s: RecordingSettings): false | Record<string, unknown> {
  if (!s.enabled) return false;
  const linked = s.linkedFlag === null ? null : s.linkedFlag.variant === null ? s.linkedFlag.key : { flag: s.linkedFlag.key, variant: s.linkedFlag.variant };
  return {
    endpoint: RECORDING_ENDPOINT,
    consoleLogRecordingEnabled: s.consoleLogs,
    recorderVersion: 'v2',
    sampleRate: s.sampleRate === '1.00' ? null : s.sampleRate,
    minimumDurationMilliseconds: s.minimumDurationMs || null,
    linkedFlag: linked,
    networkPayloadCapture: s.network,
    masking: s.masking,
    urlTriggers: [],
    urlBlocklist: [],
    eventTriggers: [],
    recordCanvas: s.recordCanvas,
    canvasFps: null,
    canvasQuality: null,
  };
}

const OFF_MEMBER = '"sessionRecording":false';
/** Members already written, by the stored settings object (the project cache keeps it until the project changes). */
const members = new WeakMap<object, string>();

/**
 * `"sessionRecording":…` as a JSON member, for answers assembled from JSON text (/flags/, /decide/: a hot path, so
 * the text is made once per stored settings object).
 */
export function sessionRecordingMember(stored: Partial<RecordingSettings> | undefined): string {
  if (!stored?.enabled) return OFF_MEMBER;
  let member = members.get(stored);
  if (member === undefined) {
    member = `"sessionRecording":${JSON.stringify(sessionRecordingConfig(recordingSettingsOf(stored)))}`;
    members.set(stored, member);
  }
  return member;
}
