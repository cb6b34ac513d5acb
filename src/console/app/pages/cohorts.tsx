/**
 * Cohorts: the list with sizes; create and edit property cohorts (OR of AND-groups of person property filters, as
 * `filters.properties`); static cohorts are shown but their members are managed through the API.
 */
import { useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type Paginated } from '../api';
import { completeFilters, PropertyFilters, type PropertyFilter } from '../components/property-filters';
import { PropertyScope } from '../components/property-input';
import { ErrorNote, Field, Loading, Page } from '../components/ui';
import { when } from '../lib/format';
import { useGet } from '../lib/hooks';

interface Cohort {
  id: number;
  name: string;
  description: string;
  is_static: boolean;
  count: number | null;
  created_at: string;
  filters: { properties?: { type: string; values: { type: string; values: PropertyFilter[] }[] } };
}

export function CohortsPage({ projectId }: { projectId: number }) {
  const list = useGet<Paginated<Cohort>>(`/api/projects/${projectId}/cohorts/?limit=200`);
  return (
    <Page title="Cohorts" testId="cohorts-page" actions={<Link class="button" href={`/project/${projectId}/cohorts/new`}>New cohort</Link>}>
      <ErrorNote error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <table class="list" data-testid="cohort-list">
          <thead><tr><th>Name</th><th>Type</th><th>Persons</th><th>Created</th></tr></thead>
          <tbody>
            {list.data.results.map((c) => (
              <tr key={c.id}>
                <td><Link href={`/project/${projectId}/cohorts/${c.id}`}>{c.name || `Cohort ${c.id}`}</Link></td>
                <td>{c.is_static ? 'static' : 'dynamic'}</td>
                <td>{c.count ?? '—'}</td>
                <td>{when(c.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data?.results.length === 0 && <p class="muted">No cohorts.</p>}
    </Page>
  );
}

export function CohortPage({ projectId, cohortId }: { projectId: number; cohortId: string }) {
  const isNew = cohortId === 'new';
  const base = `/api/projects/${projectId}/cohorts`;
  const loaded = useGet<Cohort>(isNew ? null : `${base}/${cohortId}/`);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [groups, setGroups] = useState<PropertyFilter[][]>([[]]);
  const [error, setError] = useState<Error | null>(null);
  const [, navigate] = useLocation();
  useEffect(() => {
    const c = loaded.data;
    if (!c) return;
    setName(c.name);
    setDescription(c.description ?? '');
    setGroups(c.filters?.properties?.values?.map((g) => g.values) ?? [[]]);
  }, [loaded.data]);
  if (!isNew && !loaded.data) return <><ErrorNote error={loaded.error} /><Loading when={!loaded.error} /></>;
  const isStatic = loaded.data?.is_static === true;
  return (
    <Page title={isNew ? 'New cohort' : `Cohort ${name}`} testId="cohort-page" actions={!isNew && (
      <button class="danger" onClick={async () => {
        if (!confirm('Delete this cohort?')) return;
        await api.patch(`${base}/${cohortId}/`, { deleted: true }).then(() => navigate(`/project/${projectId}/cohorts`), setError);
      }}>Delete</button>
    )}>
      <form class="card" onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        const body: Record<string, unknown> = { name, description };
        if (!isStatic) {
          body.filters = { properties: { type: 'OR', values: groups.map((g) => ({ type: 'AND', values: completeFilters(g) })).filter((g) => g.values.length > 0) } };
        }
        try {
          const answer = isNew ? await api.post<Cohort>(`${base}/`, body) : await api.patch<Cohort>(`${base}/${cohortId}/`, body);
          if (isNew) navigate(`/project/${projectId}/cohorts/${answer.id}`);
          else loaded.reload();
        } catch (err) {
          setError(err as Error);
        }
      }}>
        <Field label="Name"><input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
        <Field label="Description"><input value={description} onInput={(e) => setDescription(e.currentTarget.value)} /></Field>
        {isStatic ? <p class="muted">A static cohort: {loaded.data?.count ?? 0} persons, added through the API.</p> : (
          <>
            <h2>Persons matching any of these groups</h2>
            {groups.map((g, i) => (
              <fieldset class="condition" key={i}>
                <legend>Group {i + 1} (all of)</legend>
                <PropertyScope projectId={projectId}><PropertyFilters value={g} types={['person']} onChange={(f) => setGroups(groups.map((x, j) => (j === i ? f : x)))} /></PropertyScope>
              </fieldset>
            ))}
            <button type="button" onClick={() => setGroups([...groups, []])}>Add group</button>
          </>
        )}
        {loaded.data && <p class="muted">{loaded.data.count ?? 0} persons now.</p>}
        <ErrorNote error={error} />
        <div class="form-actions"><button type="submit" class="primary">{isNew ? 'Create cohort' : 'Save'}</button></div>
      </form>
    </Page>
  );
}
