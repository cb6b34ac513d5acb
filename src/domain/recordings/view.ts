/**
 * A recording as the API answers it: PostHog's SessionRecordingSerializer fields, from the stored metadata. Pure.
 */
import { durations, type SessionMetadata } from './metadata.js';

const DAY_MS = 86_400_000;
/** PostHog calls a recording ongoing while its last data is less than five minutes old. */
export const ONGOING_MS = 5 * 60_000;

export interface RecordingViewContext {
  now: number;
  /** The person of the recording's distinct id (PostHog's MinimalPersonSerializer), or null. */
  person: Record<string, unknown> | null;
  viewed: boolean;
  retentionDays: number;
}

const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : null);

export function recordingView(m: SessionMetadata, ctx: RecordingViewContext): Record<string, unknown> {
  const { duration, active, inactive } = durations(m);
  const expiresMs = m.startMs + ctx.retentionDays * DAY_MS;
  return {
    id: m.sessionId,
    distinct_id: m.distinctId,
    viewed: ctx.viewed,
    viewers: [],
    recording_duration: duration,
    active_seconds: active,
    inactive_seconds: inactive,
    start_time: iso(m.startMs),
    end_time: iso(m.endMs),
    click_count: m.clicks,
    keypress_count: m.keypresses,
    mouse_activity_count: m.mouseActivity,
    console_log_count: m.consoleLog,
    console_warn_count: m.consoleWarn,
    console_error_count: m.consoleError,
    start_url: m.firstUrl,
    person: ctx.person,
    retention_period_days: ctx.retentionDays,
    expiry_time: iso(expiresMs),
    recording_ttl: Math.max(0, Math.ceil((expiresMs - ctx.now) / DAY_MS)),
    snapshot_source: m.lib === null || m.lib === 'web' ? 'web' : 'mobile',
    snapshot_library: m.lib,
    ongoing: ctx.now - m.lastReceivedMs < ONGOING_MS,
    activity_score: null,
    has_summary: false,
    summary_outcome: null,
    external_references: [],
    matches_filters: true,
    // Quill's: what the recording holds (chunks are the blob keys of `snapshots`).
    storage: { chunks: m.chunks, events: m.events, stored_bytes: m.storedBytes, snapshot_bytes: m.snapshotBytes, windows: m.windows.length },
  };
}
