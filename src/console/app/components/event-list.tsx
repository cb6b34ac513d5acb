/**
 * A table of events; a row opens to its properties, its elements chain and, for an event of a session
 * (`$session_id`), a link to the session's recording. Used by live events and a person's page.
 */
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { when } from '../lib/format';
import { PropertyTable } from './ui';

export interface EventRow {
  id: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  properties: Record<string, unknown>;
  person?: { distinct_ids: string[]; properties: Record<string, unknown> } | null;
  elements?: { tag_name: string; text?: string | null; attr_class?: string[] | null; href?: string | null; attr_id?: string | null; nth_child?: number | null }[];
  elements_chain?: string;
}

export function EventList(props: { events: EventRow[]; projectId: number; showPerson?: boolean }) {
  const [open, setOpen] = useState<string | null>(null);
  if (props.events.length === 0) return <p class="muted" data-testid="no-events">No events yet.</p>;
  return (
    <table class="list events" data-testid="event-list">
      <thead>
        <tr><th>Event</th>{props.showPerson !== false && <th>Person</th>}<th>URL / screen</th><th>Time</th></tr>
      </thead>
      <tbody>
        {props.events.map((e) => [
          <tr key={e.id} class="clickable" data-event={e.event} data-testid="event-row" onClick={() => setOpen(open === e.id ? null : e.id)}>
            <td><strong>{e.event}</strong></td>
            {props.showPerson !== false && (
              <td>
                <Link href={`/project/${props.projectId}/persons/distinct:${encodeURIComponent(e.distinct_id)}`} onClick={(ev: Event) => ev.stopPropagation()}>
                  {String(e.person?.properties?.email ?? e.distinct_id)}
                </Link>
              </td>
            )}
            <td class="truncate">{String(e.properties.$current_url ?? e.properties.$screen_name ?? '')}</td>
            <td title={e.timestamp}>{when(e.timestamp)}</td>
          </tr>,
          open === e.id && (
            <tr key={`${e.id}-detail`} class="detail">
              <td colSpan={4}>
                <div class="event-detail" data-testid="event-detail">
                  <h3>Properties</h3>
                  <PropertyTable properties={e.properties} />
                  {e.elements && e.elements.length > 0 && (
                    <>
                      <h3>Elements</h3>
                      <ol class="elements" data-testid="elements-chain">
                        {e.elements.map((el, i) => (
                          <li key={i}>
                            <code>&lt;{el.tag_name}{el.attr_id ? ` id="${el.attr_id}"` : ''}{el.attr_class?.length ? ` class="${el.attr_class.join(' ')}"` : ''}{el.href ? ` href="${el.href}"` : ''}&gt;</code>
                            {el.text ? <span> {el.text}</span> : null}
                          </li>
                        ))}
                      </ol>
                    </>
                  )}
                  <p class="muted small">
                    uuid {e.id} · distinct id {e.distinct_id}
                    {typeof e.properties.$session_id === 'string' && e.properties.$session_id !== '' && (
                      <> · <Link href={`/project/${props.projectId}/replay/${encodeURIComponent(e.properties.$session_id)}`} data-testid="event-recording">watch the session's recording</Link></>
                    )}
                  </p>
                </div>
              </td>
            </tr>
          ),
        ])}
      </tbody>
    </table>
  );
}
