/**
 * What happened during a recording, beside its player (as PostHog's player inspector): the session's events (those
 * with its `$session_id`) and the console errors the recorder captured, each at its offset from the recording's
 * first frame, so that a click moves the player there. Pure: the page fetches, this sorts and labels.
 */

export type TimelineKind = 'pageview' | 'click' | 'exception' | 'event' | 'console-error';

export interface TimelineItem {
  key: string;
  /** Epoch ms. */
  at: number;
  kind: TimelineKind;
  label: string;
}

export interface SessionEvent {
  id: string;
  event: string;
  timestamp: string;
  properties: Record<string, unknown>;
  elements?: { tag_name: string; text?: string | null }[];
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** The page a pageview shows: its path (and query) when the URL parses, else the URL as sent. */
function pageOf(url: unknown): string {
  const raw = text(url);
  if (raw === null) return '';
  try {
    const u = new URL(raw);
    return `${u.pathname}${u.search}`;
  } catch {
    return raw;
  }
}

/** A session event as a timeline item. */
export function eventItem(e: SessionEvent): TimelineItem {
  const at = Date.parse(e.timestamp);
  const p = e.properties;
  if (e.event === '$pageview' || e.event === '$screen') {
    return { key: e.id, at, kind: 'pageview', label: `${e.event === '$screen' ? 'Screen' : 'Pageview'} ${pageOf(p.$current_url) || (text(p.$screen_name) ?? '')}`.trim() };
  }
  if (e.event === '$autocapture') {
    const el = e.elements?.[0];
    const what = text(p.$el_text) ?? text(el?.text) ?? (el ? `<${el.tag_name}>` : null);
    const verb = text(p.$event_type) ?? 'click';
    return { key: e.id, at, kind: 'click', label: what ? `${verb === 'click' ? 'Clicked' : verb} ${what}` : 'Autocapture' };
  }
  if (e.event === '$exception') {
    const message = text(p.$exception_message) ?? text((p.$exception_list as { value?: unknown }[] | undefined)?.[0]?.value);
    const type = text(p.$exception_type) ?? text((p.$exception_list as { type?: unknown }[] | undefined)?.[0]?.type);
    return { key: e.id, at, kind: 'exception', label: [type ?? 'Exception', message].filter(Boolean).join(': ') };
  }
  return { key: e.id, at, kind: 'event', label: e.event };
}

/** A console line's arguments as the recorder stores them (each JSON-stringified) made readable. */
function consoleText(payload: unknown): string {
  if (!Array.isArray(payload)) return '';
  return payload.map((a) => {
    if (typeof a !== 'string') return String(a);
    try {
      const v = JSON.parse(a) as unknown;
      return typeof v === 'string' ? v : a;
    } catch {
      return a;
    }
  }).join(' ');
}

/** The console errors among rrweb events (plugin events of `rrweb/console@1` at level `error`). */
export function consoleErrorItems(events: readonly { type: number; timestamp: number; data?: unknown }[]): TimelineItem[] {
  const out: TimelineItem[] = [];
  for (const e of events) {
    if (e.type !== 6) continue;
    const data = e.data as { plugin?: unknown; payload?: { level?: unknown; payload?: unknown } } | undefined;
    if (data?.plugin !== 'rrweb/console@1' || data.payload?.level !== 'error') continue;
    out.push({ key: `console-${e.timestamp}-${out.length}`, at: e.timestamp, kind: 'console-error', label: `Console error ${consoleText(data.payload.payload)}`.trim() });
  }
  return out;
}

/** Items in time order (ties keep their order), without the recorder's own events. */
export function timeline(events: readonly SessionEvent[], consoleErrors: readonly TimelineItem[]): TimelineItem[] {
  const items = events.filter((e) => !e.event.startsWith('$snapshot')).map(eventItem).concat(consoleErrors);
  return items.filter((i) => Number.isFinite(i.at)).sort((a, b) => a.at - b.at);
}

/** `m:ss` of a time into the recording; `-0:03` before its first frame (a client clock slightly behind). */
export function timelineClock(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const a = Math.abs(ms);
  return `${sign}${Math.floor(a / 60_000)}:${String(Math.floor((a % 60_000) / 1000)).padStart(2, '0')}`;
}
