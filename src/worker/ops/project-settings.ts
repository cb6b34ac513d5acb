/**
 * PATCH /api/projects/:id/: the project settings analyses read: `timezone` (buckets and date boundaries,
 * analytics.md §0.4), `test_account_filters` (ANDed in with `filter_test_accounts=true`), `path_cleaning_filters`
 * (§7.1), the name, and `event_retention_days` (null: keep events forever; a change starts a retention pass on every
 * worker at once, src/worker/retention.ts, without waiting for it), the switches of posthog-js's optional modules
 * its remote config carries (PostHog's fields: src/domain/sdk-settings.ts), and the session-recording settings under
 * PostHog's names (src/domain/recordings/settings.ts).
 */
import { AnalyticsInputError } from '../../domain/analytics/errors.js';
import { parseFilters } from '../../domain/analytics/property-filters.js';
import { cleaningRules } from '../../domain/analytics/paths.js';
import { isTimeZone } from '../../domain/analytics/time-zone.js';
import { Errors } from '../../protocol/errors.js';
import { replicate } from '../replication.js';
import { json } from '../reply.js';
import { checkText, MAX_LENGTH } from '../../domain/account-fields.js';
import { fieldValue, requireAdmin, serializeProject, userOf } from './accounts.js';
import type { OpHandler } from './types.js';
import { RETENTION_RUN } from '../retention.js';
import { settingsFromPatch } from '../../domain/sdk-settings.js';
import { applyRecordingSettings, DEFAULT_RECORDING_SETTINGS, recordingSettingsOf, touchesRecordingSettings } from '../../domain/recordings/settings.js';
import { RECORDINGS_CLEAN } from './recordings.js';

/** The longest retention accepted: a century. */
const MAX_RETENTION_DAYS = 36_500;

/** `event_retention_days` as sent: undefined (unchanged), null (off) or whole days, worded as DRF's IntegerField. */
function retentionDaysOf(raw: unknown): number | null | undefined {
  if (raw === undefined || raw === null) return raw;
  const n = typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw Errors.validation('event_retention_days', 'invalid', 'A valid integer is required.');
  if (n < 1) throw Errors.validation('event_retention_days', 'min_value', 'Ensure this value is greater than or equal to 1.');
  if (n > MAX_RETENTION_DAYS) throw Errors.validation('event_retention_days', 'max_value', `Ensure this value is less than or equal to ${MAX_RETENTION_DAYS}.`);
  return n;
}
import { bodyOf, principalOf, projectIdOf } from './types.js';

export const updateProject: OpHandler = async (item, rt) => {
  const id = projectIdOf(item);
  requireAdmin(userOf(rt.meta, principalOf(item).userId));
  const body = bodyOf(item);
  const name = fieldValue(checkText('name', body.name, { max: MAX_LENGTH.projectName, required: false }));
  if (body.timezone !== undefined && (typeof body.timezone !== 'string' || !isTimeZone(body.timezone))) {
    throw Errors.validation('timezone', 'invalid_choice', `"${String(body.timezone)}" is not a valid choice.`);
  }
  if (body.test_account_filters !== undefined || body.path_cleaning_filters !== undefined) {
    try {
      parseFilters(body.test_account_filters, 'test_account_filters');
      cleaningRules(body.path_cleaning_filters, 'path_cleaning_filters');
    } catch (error) {
      if (error instanceof AnalyticsInputError) throw Errors.validation(error.attr, error.code, error.message);
      throw error;
    }
  }
  const retentionDays = retentionDaysOf(body.event_retention_days);
  const sdk = settingsFromPatch(body);
  if ('refusal' in sdk) throw Errors.validation(sdk.refusal.attr, sdk.refusal.code, sdk.refusal.detail);
  // Session-recording fields (src/domain/recordings/settings.ts): checked here, applied to the stored ones below.
  const recordingFields = touchesRecordingSettings(body);
  if (recordingFields) applyRecordingSettings(DEFAULT_RECORDING_SETTINGS, body);
  let recordingRetentionChanged = false;
  let retentionChanged = false;
  const project = await rt.meta.write(() => {
    const current = rt.meta.projects.get(id);
    if (!current) throw Errors.notFound('Project not found.');
    const next = { ...current };
    if (name !== undefined) next.name = name;
    if (typeof body.timezone === 'string') next.timezone = body.timezone;
    if (Array.isArray(body.test_account_filters)) next.test_account_filters = body.test_account_filters;
    if (Array.isArray(body.path_cleaning_filters)) next.path_cleaning_filters = cleaningRules(body.path_cleaning_filters, 'path_cleaning_filters');
    if (retentionDays !== undefined) {
      retentionChanged = (current.event_retention_days ?? null) !== retentionDays;
      next.event_retention_days = retentionDays;
    }
    if (Object.keys(sdk.changes).length > 0) next.sdk_settings = { ...current.sdk_settings, ...sdk.changes };
    if (recordingFields) {
      const before = recordingSettingsOf(current.recordings);
      next.recordings = applyRecordingSettings(before, body);
      recordingRetentionChanged = next.recordings.retentionDays !== before.retentionDays;
    }
    rt.meta.projects.put(id, next);
    return next;
  });
  await replicate(rt, { projects: true, projectId: id });
  if (retentionChanged && retentionDays !== null) {
    rt.peers.all({ kind: RETENTION_RUN }).catch((error: unknown) => rt.log.error({ event: 'retention_failed', err: error }, 'starting a retention pass failed'));
  }
  if (recordingRetentionChanged) {
    rt.peers.all({ kind: RECORDINGS_CLEAN }).catch((error: unknown) => rt.log.error({ event: 'recording_retention_failed', err: error }, 'starting a recordings retention pass failed'));
  }
  return json(200, serializeProject(rt.meta, project));
};
