/**
 * Session recordings: the list (newest first, with duration, activity, errors and first URL; `?person_uuid=` from a
 * person's page) and a recording's page with its metadata and a player. Its own chunk; the player (rrweb's
 * Replayer, from the rrweb fork posthog-js ships: no other dependency) is a further chunk loaded when a recording
 * opens (./recording-player.tsx).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Link, useSearch } from 'wouter-preact';
import { api, qs } from '../api';
import { ErrorNote, Loading, Page } from '../components/ui';
import { useGet } from '../lib/hooks';
import { consoleErrorItems, timeline, timelineClock, type SessionEvent, type TimelineItem } from '../lib/recording-timeline';
import type { eventWithTime } from 'posthog-js/rrweb';

export interface RecordingRow {
  id: string;
  distinct_id: string;
  recording_duration: number;
  active_seconds: number;
  start_time: string;
  end_time: string;
  click_count: number;
  keypress_count: number;
  console_error_count: number;
  console_warn_count: number;
  console_log_count: number;
  start_url: string | null;
  viewed: boolean;
  ongoing: boolean;
  person: { uuid: string; name: string } | null;
  storage: { chunks: number; events: number };
}

const PAGE = 50;

export function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}` : `${m}:${String(s).padStart(2, '0')}`;
}

const when = (iso: string) => new Date(iso).toLocaleString();

export function RecordingsPage({ projectId }: { projectId: number }) {
  // From the address, so that following "all recordings" (same page, no person) updates the list.
  const personUuid = new URLSearchParams(useSearch()).get('person_uuid') ?? '';
  const [range, setRange] = useState('-7d');
  const [minDuration, setMinDuration] = useState('0');
  const [withErrors, setWithErrors] = useState(false);
  const [eventName, setEventName] = useState('');
  // What is typed, applied as the filter when committed (Enter or leaving the field), not at each keystroke.
  const [eventDraft, setEventDraft] = useState('');
  const [offset, setOffset] = useState(0);
  const predicates = [
    ...(minDuration !== '0' ? [{ key: 'duration', type: 'recording', operator: 'gt', value: Number(minDuration) }] : []),
    ...(withErrors ? [{ key: 'console_error_count', type: 'recording', operator: 'gt', value: 0 }] : []),
  ];
  const list = useGet<{ results: RecordingRow[]; has_next: boolean }>(
    `/api/projects/${projectId}/session_recordings/${qs({
      date_from: range, person_uuid: personUuid || null, limit: PAGE, offset,
      having_predicates: predicates.length > 0 ? JSON.stringify(predicates) : null,
      events: eventName.trim() ? JSON.stringify([{ id: eventName.trim(), type: 'events' }]) : null,
    })}`,
  );
  // Every filter change starts again from the newest page.
  const change = <T,>(set: (v: T) => void) => (v: T) => {
    setOffset(0);
    set(v);
  };
  return (
    <Page title="Recordings" testId="recordings-page" actions={
      <select value={range} onChange={(e) => change(setRange)((e.target as HTMLSelectElement).value)} aria-label="Started">
        <option value="-1d">Last 24 hours</option>
        <option value="-7d">Last 7 days</option>
        <option value="-30d">Last 30 days</option>
        <option value="-365d">Last year</option>
      </select>
    }>
      <form class="filters recording-filters" data-testid="recording-filters" onSubmit={(e) => e.preventDefault()}>
        <label>Longer than{' '}
          <select name="min_duration" value={minDuration} onChange={(e) => change(setMinDuration)((e.target as HTMLSelectElement).value)}>
            <option value="0">any length</option>
            <option value="10">10 seconds</option>
            <option value="60">1 minute</option>
            <option value="300">5 minutes</option>
          </select>
        </label>
        <label><input type="checkbox" name="with_errors" checked={withErrors} onChange={(e) => change(setWithErrors)((e.target as HTMLInputElement).checked)} /> with console errors</label>
        <label>With the event{' '}
          <input name="event" placeholder="e.g. purchase" value={eventDraft}
            onInput={(e) => setEventDraft((e.target as HTMLInputElement).value)}
            onChange={(e) => change(setEventName)((e.target as HTMLInputElement).value)} />
        </label>
      </form>
      {personUuid && <p class="muted">One person's recordings · <Link href={`/project/${projectId}/replay`}>all recordings</Link></p>}
      <ErrorNote error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && list.data.results.length === 0 && (
        <p class="muted">{predicates.length > 0 || eventName.trim() ? 'No recordings match these filters.' : 'No recordings in this range. Turn recording on under Settings, and posthog-js records the sessions of your site.'}</p>
      )}
      {list.data && list.data.results.length > 0 && (
        <table class="table" data-testid="recordings-table">
          <thead><tr><th>Started</th><th>Person</th><th>Duration</th><th>Active</th><th>Clicks</th><th>Keys</th><th>Errors</th><th>First URL</th></tr></thead>
          <tbody>
            {list.data.results.map((r) => (
              <tr key={r.id} class={r.viewed ? 'muted' : ''}>
                <td><Link href={`/project/${projectId}/replay/${encodeURIComponent(r.id)}`}>{when(r.start_time)}</Link>{r.ongoing ? ' · live' : ''}</td>
                <td>{r.person?.name ?? <code>{r.distinct_id}</code>}</td>
                <td>{duration(r.recording_duration)}</td>
                <td>{duration(r.active_seconds)}</td>
                <td>{r.click_count}</td>
                <td>{r.keypress_count}</td>
                <td>{r.console_error_count}</td>
                <td class="url">{r.start_url ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        {offset > 0 && <button onClick={() => setOffset(Math.max(0, offset - PAGE))}>Newer</button>}{' '}
        {list.data?.has_next && <button onClick={() => setOffset(offset + PAGE)}>Older</button>}
      </p>
    </Page>
  );
}

type Player = import('./recording-player').Player;

/** Session events shown beside the player (PostHog's inspector shows the first page of them too). */
const TIMELINE_EVENTS = 500;


export function RecordingPage({ projectId, sessionId }: { projectId: number; sessionId: string }) {
  const base = `/api/projects/${projectId}/session_recordings/${encodeURIComponent(sessionId)}`;
  // Opening a recording marks it viewed, as PostHog's player does.
  const rec = useGet<RecordingRow>(`${base}/${qs({ save_view: true })}`);
  const stage = useRef<HTMLDivElement>(null);
  const player = useRef<Player | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [status, setStatus] = useState('Loading the snapshots…');
  const [started, setStarted] = useState<number | null>(null);
  const [consoleErrors, setConsoleErrors] = useState<TimelineItem[]>([]);
  // The session's events, a minute either side of the recording (events are stamped by the client's clock too).
  const r0 = rec.data;
  const sessionEvents = useGet<{ results: SessionEvent[] }>(r0 ? `/api/projects/${projectId}/events/${qs({
    properties: JSON.stringify([{ key: '$session_id', value: sessionId, operator: 'exact', type: 'event' }]),
    after: new Date(Date.parse(r0.start_time) - 60_000).toISOString(), before: new Date(Date.parse(r0.end_time) + 60_000).toISOString(),
    orderBy: JSON.stringify(['timestamp']), limit: TIMELINE_EVENTS,
  })}` : null);
  const items = timeline(sessionEvents.data?.results ?? [], consoleErrors);
  // The player's chunk and the snapshots load beside the recording's row, not after it.
  useEffect(() => {
    if (!stage.current) return;
    let cancelled = false;
    (async () => {
      const { streamSnapshots, mountPlayer } = await import('./recording-player');
      // The player starts on the first group of blobs; later groups are added while it plays.
      let early: eventWithTime[] = [];
      let count = 0;
      await streamSnapshots(base, (events, done, total) => {
        if (cancelled || !stage.current) return false;
        count += events.length;
        const errors = consoleErrorItems(events);
        if (errors.length > 0) setConsoleErrors((before) => [...before, ...errors]);
        if (player.current) player.current.add(events);
        else {
          early.push(...events);
          if (early.length >= 2 || done === total) {
            player.current = mountPlayer(stage.current, early);
            setStarted(player.current.startTime());
            early = [];
          }
        }
        setStatus(done < total ? `Loading the snapshots… ${done} of ${total}` : `${count} events`);
        return true;
      });
    })().catch((e: Error) => setError(e));
    return () => {
      cancelled = true;
      player.current?.destroy();
      player.current = null;
    };
  }, [base]);
  const r = rec.data;
  return (
    <Page title="Recording" testId="recording-page" actions={r && (
      <button class="danger" onClick={async () => {
        if (!confirm('Delete this recording?')) return;
        try {
          await api.del(`${base}/`);
          history.back();
        } catch (e) {
          setError(e as Error);
        }
      }}>Delete</button>
    )}>
      <ErrorNote error={rec.error ?? error} />
      <Loading when={rec.loading && !r} />
      {r && (
        <p class="muted" data-testid="recording-meta">
          {when(r.start_time)} · {duration(r.recording_duration)} ({duration(r.active_seconds)} active) · {r.click_count} clicks · {r.keypress_count} keys ·
          {' '}{r.console_error_count} errors, {r.console_warn_count} warnings · {r.person ? <Link href={`/project/${projectId}/persons/${r.person.uuid}`}>{r.person.name}</Link> : <code>{r.distinct_id}</code>}
          {r.start_url && <> · <span class="url">{r.start_url}</span></>}
        </p>
      )}
      <p class="muted" data-testid="player-status">{status}</p>
      <div class="replay-layout">
        <div ref={stage} class="replay-stage" data-testid="replay-stage" />
        <aside class="replay-timeline" data-testid="replay-timeline">
          <h3>Timeline</h3>
          <ErrorNote error={sessionEvents.error} />
          {items.length === 0 && <p class="muted small">{sessionEvents.loading ? 'Loading…' : 'No events in this session.'}</p>}
          <ol>
            {items.map((i) => (
              <li key={i.key} class={`timeline-${i.kind}`} data-testid="timeline-item" data-kind={i.kind}>
                <button type="button" class="link" disabled={started === null} onClick={() => player.current?.seek(i.at - (started ?? i.at))}>
                  <span class="muted">{started === null ? '' : timelineClock(i.at - started)}</span> {i.label}
                </button>
              </li>
            ))}
          </ol>
        </aside>
      </div>
    </Page>
  );
}
