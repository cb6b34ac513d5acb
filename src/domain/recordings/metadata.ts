/**
 * A session's metadata, folded chunk by chunk as its snapshots arrive: the fold is what the store runs inside the
 * transaction that appends a chunk, so the list and a recording's page read one small record instead of the
 * recording. Pure: no I/O, time comes in with the chunk.
 *
 * What counts (PostHog's recording consumer counts the same events; rrweb's numbers in ./rrweb.ts):
 * - clicks: MouseInteraction of type Click, DblClick or TouchEnd;
 * - keypresses: Input events (rrweb emits one per change of an input's value, masked or not);
 * - mouse activity: MouseMove, MouseInteraction and TouchMove events;
 * - console: Plugin events of posthog-js' console plugin, by `payload.level`: `error` and `assert` are errors,
 *   `warn` warnings, every other level (log, info, debug, trace, …) a log line;
 * - first URL: the `href` of the earliest Meta event (rrweb writes one at every full snapshot, so at each page load);
 * - active time: PostHog's segmentation. Events are taken in time order; an "active" event (an IncrementalSnapshot
 *   from the mouse, a scroll, a resize, an input, a touch, media or a drag) opens an active segment, which extends
 *   over every later event until one comes more than 5 s after the last active event; each active segment counts
 *   its length (at least 1 ms). The fold keeps the open segment between chunks. An event older than the last one
 *   folded (a chunk of another tab of the session arriving late) counts for everything but active time, which
 *   would need the events again to place it.
 */
import { CONSOLE_PLUGIN, EventType, IncrementalSource, MouseInteraction, type RrwebEvent } from './rrweb.js';

/** PostHog's threshold: no active event for this long ends an active segment. */
export const ACTIVITY_THRESHOLD_MS = 5_000;
/** Window ids a session keeps (a window is a tab; hundreds would only be a misbehaving client). */
export const MAX_WINDOWS = 32;
/** The longest first URL kept. */
export const MAX_URL_LENGTH = 2_048;

const ACTIVE_SOURCES: ReadonlySet<number> = new Set([
  IncrementalSource.MouseMove, IncrementalSource.MouseInteraction, IncrementalSource.Scroll, IncrementalSource.ViewportResize,
  IncrementalSource.Input, IncrementalSource.TouchMove, IncrementalSource.MediaInteraction, IncrementalSource.Drag,
]);
const MOUSE_SOURCES: ReadonlySet<number> = new Set([IncrementalSource.MouseMove, IncrementalSource.MouseInteraction, IncrementalSource.TouchMove]);
const CLICKS: ReadonlySet<number> = new Set([MouseInteraction.Click, MouseInteraction.DblClick, MouseInteraction.TouchEnd]);

/** The active-time segmentation carried from one chunk to the next. */
export interface ActivityState {
  /** Milliseconds of active segments already closed. */
  closedMs: number;
  /** The open segment: null before the first event. */
  open: { active: boolean; start: number; end: number } | null;
  /** Timestamp of the last active event (0: none yet). */
  lastActive: number;
  /** Timestamp of the last event folded into the segmentation. */
  last: number;
}

/** What is stored for a session (one record per session, beside its chunks). */
export interface SessionMetadata {
  team: number;
  sessionId: string;
  /** The distinct id of the first chunk (a session belongs to one visitor; an identify mid-session keeps the first). */
  distinctId: string;
  startMs: number;
  endMs: number;
  firstUrl: string | null;
  /** Timestamp of the Meta event `firstUrl` came from. */
  firstUrlMs: number;
  clicks: number;
  keypresses: number;
  mouseActivity: number;
  consoleLog: number;
  consoleWarn: number;
  consoleError: number;
  activity: ActivityState;
  events: number;
  chunks: number;
  /** Bytes of the compressed chunks as stored. */
  storedBytes: number;
  /** Bytes of the snapshot data as the SDK sent it (its JSON text). */
  snapshotBytes: number;
  windows: string[];
  /** `$lib` of the first chunk (`web` for posthog-js). */
  lib: string | null;
  /** When Quill received the first and the last chunk (epoch ms). */
  firstReceivedMs: number;
  lastReceivedMs: number;
}

/** One chunk of a session as it is appended: the events of one `$snapshot` event of the SDK. */
export interface ChunkFacts {
  events: readonly RrwebEvent[];
  windowId: string | null;
  distinctId: string;
  lib: string | null;
  receivedMs: number;
  snapshotBytes: number;
  storedBytes: number;
}

function emptyMetadata(team: number, sessionId: string, chunk: ChunkFacts): SessionMetadata {
  return {
    team, sessionId, distinctId: chunk.distinctId, startMs: Infinity, endMs: -Infinity, firstUrl: null, firstUrlMs: Infinity,
    clicks: 0, keypresses: 0, mouseActivity: 0, consoleLog: 0, consoleWarn: 0, consoleError: 0,
    activity: { closedMs: 0, open: null, lastActive: 0, last: -Infinity },
    events: 0, chunks: 0, storedBytes: 0, snapshotBytes: 0, windows: [], lib: chunk.lib,
    firstReceivedMs: chunk.receivedMs, lastReceivedMs: chunk.receivedMs,
  };
}

function dataOf(e: RrwebEvent): Record<string, unknown> {
  return e.data !== null && typeof e.data === 'object' ? (e.data as Record<string, unknown>) : {};
}

function isActive(e: RrwebEvent): boolean {
  return e.type === EventType.IncrementalSnapshot && ACTIVE_SOURCES.has(dataOf(e).source as number);
}

/** Folds one event into the segmentation (events come in time order; older ones are skipped by the caller). */
function segment(a: ActivityState, t: number, active: boolean): void {
  const open = a.open;
  const startsNew = open === null || (active && !open.active) || (open.active && a.lastActive + ACTIVITY_THRESHOLD_MS < t);
  if (active) a.lastActive = t;
  a.last = t;
  if (startsNew) {
    if (open?.active) a.closedMs += Math.max(1, open.end - open.start);
    a.open = { active, start: t, end: t };
  } else {
    open!.end = t;
  }
}

/** Active milliseconds so far: the closed active segments and the open one, if active. */
export function activeMs(a: ActivityState): number {
  return a.closedMs + (a.open?.active ? Math.max(1, a.open.end - a.open.start) : 0);
}

function countConsole(m: SessionMetadata, data: Record<string, unknown>): void {
  if (data.plugin !== CONSOLE_PLUGIN) return;
  const payload = data.payload !== null && typeof data.payload === 'object' ? (data.payload as Record<string, unknown>) : {};
  const level = payload.level;
  if (level === 'error' || level === 'assert') m.consoleError++;
  else if (level === 'warn') m.consoleWarn++;
  else m.consoleLog++;
}

/**
 * The metadata after one more chunk of the session (`previous` undefined for its first). Returns a new record;
 * `previous` is not changed.
 */
export function foldChunk(previous: SessionMetadata | undefined, team: number, sessionId: string, chunk: ChunkFacts): SessionMetadata {
  const m: SessionMetadata = previous
    ? { ...previous, activity: { ...previous.activity, open: previous.activity.open && { ...previous.activity.open } }, windows: [...previous.windows] }
    : emptyMetadata(team, sessionId, chunk);
  m.chunks++;
  m.events += chunk.events.length;
  m.storedBytes += chunk.storedBytes;
  m.snapshotBytes += chunk.snapshotBytes;
  m.firstReceivedMs = Math.min(m.firstReceivedMs, chunk.receivedMs);
  m.lastReceivedMs = Math.max(m.lastReceivedMs, chunk.receivedMs);
  if (chunk.windowId !== null && !m.windows.includes(chunk.windowId) && m.windows.length < MAX_WINDOWS) m.windows.push(chunk.windowId);

  // Time order within the chunk (posthog-js buffers in order, but a chunk is not promised to be sorted).
  const ordered = [...chunk.events].sort((a, b) => a.timestamp - b.timestamp);
  for (const e of ordered) {
    const t = e.timestamp;
    if (t < m.startMs) m.startMs = t;
    if (t > m.endMs) m.endMs = t;
    const data = dataOf(e);
    if (e.type === EventType.IncrementalSnapshot) {
      const source = data.source as number;
      if (source === IncrementalSource.MouseInteraction && CLICKS.has(data.type as number)) m.clicks++;
      if (source === IncrementalSource.Input) m.keypresses++;
      if (MOUSE_SOURCES.has(source)) m.mouseActivity++;
    } else if (e.type === EventType.Meta) {
      if (typeof data.href === 'string' && t < m.firstUrlMs) {
        m.firstUrl = data.href.slice(0, MAX_URL_LENGTH);
        m.firstUrlMs = t;
      }
    } else if (e.type === EventType.Plugin) {
      countConsole(m, data);
    }
    if (t >= m.activity.last) segment(m.activity, t, isActive(e));
  }
  return m;
}

/** Whole seconds of a session (PostHog's `recording_duration`), its active and inactive parts. */
export function durations(m: SessionMetadata): { duration: number; active: number; inactive: number } {
  const duration = m.endMs >= m.startMs ? Math.round((m.endMs - m.startMs) / 1000) : 0;
  const active = Math.min(duration, Math.round(activeMs(m.activity) / 1000));
  return { duration, active, inactive: duration - active };
}
