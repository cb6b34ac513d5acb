/**
 * One person: properties (edit, delete), distinct ids (split), their events, the cohorts they are in, and every
 * flag's value for them with the reason (`evaluation_reasons`). `personId` is a uuid, or `distinct:<id>` when the
 * page is opened from an event.
 */
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, qs, type Paginated } from '../api';
import { EventList, type EventRow } from '../components/event-list';
import { ErrorNote, Loading, Page, PropertyTable, Tabs } from '../components/ui';
import { personName, valueText, when } from '../lib/format';
import { useGet } from '../lib/hooks';
import type { PersonRow } from './persons';

const TABS = ['Events', 'Properties', 'Cohorts', 'Feature flags'] as const;

export function PersonPage({ projectId, personId }: { projectId: number; personId: string }) {
  const [, navigate] = useLocation();
  const [tab, setTab] = useState<(typeof TABS)[number]>('Events');
  const [error, setError] = useState<Error | null>(null);
  const base = `/api/projects/${projectId}/persons`;
  const byDistinct = personId.startsWith('distinct:');
  const found = useGet<PersonRow | Paginated<PersonRow>>(byDistinct ? `${base}/${qs({ distinct_id: personId.slice('distinct:'.length) })}` : `${base}/${encodeURIComponent(personId)}/`);
  const person: PersonRow | null = !found.data ? null : 'results' in found.data ? found.data.results[0] ?? null : found.data;

  if (found.error) return <Page title="Person"><ErrorNote error={found.error} /></Page>;
  if (!found.data) return <Loading when />;
  if (!person) return <Page title="Person"><p>No person has this distinct id.</p></Page>;
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      found.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <Page title={personName(person)} testId="person-page" actions={
      <>
        {person.distinct_ids.length > 1 && (
          <button onClick={() => confirm('Split this person into one person per distinct id?') && act(() => api.post(`${base}/${person.uuid}/split/`, {}))}>Split</button>
        )}
        <button class="danger" onClick={() => confirm('Delete this person? Their events stay.') && act(async () => {
          await api.del(`${base}/${person.uuid}/`);
          navigate(`/project/${projectId}/persons`);
        })}>Delete person</button>
      </>
    }>
      <p class="muted">Created {when(person.created_at)} · uuid {person.uuid}</p>
      <p>Distinct ids: {person.distinct_ids.map((d) => <code key={d} class="chip">{d}</code>)}</p>
      <p><Link href={`/project/${projectId}/replay?person_uuid=${person.uuid}`} data-testid="person-recordings">Recordings of this person</Link></p>
      <ErrorNote error={error} />
      <Tabs tabs={TABS} value={tab} onChange={(t) => setTab(t as typeof tab)} />
      {tab === 'Events' && <PersonEvents projectId={projectId} uuid={person.uuid} />}
      {tab === 'Properties' && (
        <PropertyTable properties={person.properties}
          onSave={(key, value) => act(() => api.post(`${base}/${person.uuid}/update_property/`, { key, value }))}
          onDelete={(key) => act(() => api.post(`${base}/${person.uuid}/delete_property/`, { $unset: key }))} />
      )}
      {tab === 'Cohorts' && <PersonCohorts projectId={projectId} uuid={person.uuid} />}
      {tab === 'Feature flags' && <PersonFlags projectId={projectId} distinctId={person.distinct_ids[0]!} />}
    </Page>
  );
}

function PersonEvents({ projectId, uuid }: { projectId: number; uuid: string }) {
  const events = useGet<Paginated<EventRow>>(`/api/projects/${projectId}/events/${qs({ person_id: uuid, limit: 100 })}`);
  return (
    <div data-testid="person-events">
      <ErrorNote error={events.error} />
      <Loading when={events.loading && !events.data} />
      {events.data && <EventList events={events.data.results} projectId={projectId} showPerson={false} />}
    </div>
  );
}

function PersonCohorts({ projectId, uuid }: { projectId: number; uuid: string }) {
  const cohorts = useGet<{ results: { id: number; name: string; count?: number }[] }>(`/api/projects/${projectId}/persons/cohorts/${qs({ person_id: uuid })}`);
  return (
    <div data-testid="person-cohorts">
      <ErrorNote error={cohorts.error} />
      {cohorts.data && (cohorts.data.results.length === 0 ? <p class="muted">In no cohort.</p> : (
        <ul>{cohorts.data.results.map((c) => <li key={c.id}><Link href={`/project/${projectId}/cohorts/${c.id}`}>{c.name || `Cohort ${c.id}`}</Link></li>)}</ul>
      ))}
    </div>
  );
}

function PersonFlags({ projectId, distinctId }: { projectId: number; distinctId: string }) {
  const reasons = useGet<Record<string, { value: unknown; evaluation: { reason: string; condition_index: number | null } }>>(
    `/api/projects/${projectId}/feature_flags/evaluation_reasons/${qs({ distinct_id: distinctId })}`);
  return (
    <div data-testid="person-flags">
      <ErrorNote error={reasons.error} />
      {reasons.data && (
        <table class="list">
          <thead><tr><th>Flag</th><th>Value</th><th>Reason</th></tr></thead>
          <tbody>
            {Object.entries(reasons.data).map(([key, r]) => (
              <tr key={key}>
                <td>{key}</td>
                <td><code>{valueText(r.value)}</code></td>
                <td>{r.evaluation.reason.replace(/_/g, ' ')}{r.evaluation.condition_index !== null && r.evaluation.condition_index !== undefined ? ` (condition ${r.evaluation.condition_index + 1})` : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
