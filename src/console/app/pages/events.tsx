/**
 * Live events: the newest events of the project, refreshed every second by asking only for events after the newest
 * one shown (`after=`), so each poll is small however many events the project has. Older pages load on demand.
 */
import { useRef, useState } from 'preact/hooks';
import { api, pathOf, qs, type Paginated } from '../api';
import { EventList, type EventRow } from '../components/event-list';
import { completeFilters, PropertyFilters, type PropertyFilter } from '../components/property-filters';
import { PropertyScope } from '../components/property-input';
import { ErrorNote, Page } from '../components/ui';
import { useInterval, useQueryParam } from '../lib/hooks';

const POLL_MS = 1000;
const PAGE = 100;
/** Rows kept in the page: older ones are dropped as new ones arrive (load them again with "Older"). */
const KEEP = 1000;

export function EventsPage({ projectId }: { projectId: number }) {
  const [eventName, setEventName] = useQueryParam('event');
  const [distinctId, setDistinctId] = useQueryParam('distinct_id');
  const [filters, setFilters] = useState<PropertyFilter[]>([]);
  const [events, setEvents] = useState<EventRow[]>([]);
  const [paused, setPaused] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [older, setOlder] = useState<string | null>(null);
  const newest = useRef<string | null>(null);
  const ready = completeFilters(filters);
  const filterKey = JSON.stringify([projectId, eventName, distinctId, ready]);
  const base = (extra: Record<string, string | number | undefined>) =>
    `/api/projects/${projectId}/events/${qs({ event: eventName, distinct_id: distinctId, properties: ready.length ? JSON.stringify(ready) : undefined, limit: PAGE, ...extra })}`;

  useInterval(async () => {
    if (paused && newest.current !== null) return;
    try {
      if (newest.current === null) {
        const page = await api.get<Paginated<EventRow>>(base({}));
        setEvents(page.results);
        setOlder(page.next);
        newest.current = page.results[0]?.timestamp ?? new Date(0).toISOString();
        setLoaded(true);
      } else {
        const page = await api.get<Paginated<EventRow>>(base({ after: newest.current }));
        if (page.results.length > 0) {
          newest.current = page.results[0]!.timestamp > newest.current ? page.results[0]!.timestamp : newest.current;
          setEvents((shown) => {
            const ids = new Set(shown.map((e) => e.id));
            return [...page.results.filter((e) => !ids.has(e.id)), ...shown].slice(0, KEEP);
          });
        }
      }
      setError(null);
    } catch (err) {
      setError(err as Error);
    }
  }, POLL_MS, [filterKey, paused]);

  // A change of filters starts again from the newest events.
  const lastKey = useRef(filterKey);
  if (lastKey.current !== filterKey) {
    lastKey.current = filterKey;
    newest.current = null;
  }

  return (
    <Page title="Live events" testId="events-page" actions={
      <>
        <span class={paused ? 'badge' : 'badge live'} data-testid="live-state">{paused ? 'Paused' : 'Live'}</span>
        <button onClick={() => setPaused(!paused)}>{paused ? 'Resume' : 'Pause'}</button>
      </>
    }>
      <div class="toolbar">
        <input aria-label="event name" placeholder="Event name (exact)" value={eventName} onChange={(e) => setEventName(e.currentTarget.value.trim())} />
        <input aria-label="distinct id" placeholder="Distinct id" value={distinctId} onChange={(e) => setDistinctId(e.currentTarget.value.trim())} />
      </div>
      <PropertyScope projectId={projectId}><PropertyFilters value={filters} onChange={setFilters} types={['event', 'person']} /></PropertyScope>
      <ErrorNote error={error} />
      {loaded ? <EventList events={events} projectId={projectId} /> : <p class="muted">Loading…</p>}
      {older && (
        <button onClick={async () => {
          try {
            const page = await api.get<Paginated<EventRow>>(pathOf(older));
            setEvents((shown) => [...shown, ...page.results]);
            setOlder(page.next);
          } catch (err) {
            setError(err as Error);
          }
        }}>Older events</button>
      )}
    </Page>
  );
}
