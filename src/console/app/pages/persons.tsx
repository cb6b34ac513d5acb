/** Persons: search (e-mail, distinct id, name) and property filters, one page of 50 at a time. */
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { pathOf, qs, type Paginated } from '../api';
import { completeFilters, PropertyFilters, type PropertyFilter } from '../components/property-filters';
import { PropertyScope } from '../components/property-input';
import { ErrorNote, Loading, Page, Pager } from '../components/ui';
import { personName, when } from '../lib/format';
import { useGet, useQueryParam } from '../lib/hooks';

export interface PersonRow {
  id: number;
  uuid: string;
  name?: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  created_at: string;
  is_identified?: boolean;
}

export function PersonsPage({ projectId }: { projectId: number }) {
  const [search, setSearch] = useQueryParam('search');
  const [filters, setFilters] = useState<PropertyFilter[]>([]);
  const ready = completeFilters(filters);
  const first = `/api/projects/${projectId}/persons/${qs({ search, properties: ready.length ? JSON.stringify(ready) : undefined, limit: 50 })}`;
  const [path, setPath] = useState<string | null>(null);
  const list = useGet<Paginated<PersonRow>>(path ?? first);
  return (
    <Page title="Persons" testId="persons-page">
      <div class="toolbar">
        <input type="search" aria-label="search persons" placeholder="Search by e-mail, name or distinct id" value={search}
          onChange={(e) => { setPath(null); setSearch(e.currentTarget.value.trim()); }} />
      </div>
      <PropertyScope projectId={projectId}><PropertyFilters value={filters} onChange={(f) => { setPath(null); setFilters(f); }} types={['person']} /></PropertyScope>
      <ErrorNote error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <table class="list" data-testid="person-list">
            <thead><tr><th>Person</th><th>Distinct ids</th><th>Created</th></tr></thead>
            <tbody>
              {list.data.results.map((p) => (
                <tr key={p.uuid}>
                  <td><Link href={`/project/${projectId}/persons/${p.uuid}`}>{personName(p)}</Link></td>
                  <td class="truncate">{p.distinct_ids.join(', ')}</td>
                  <td>{when(p.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.results.length === 0 && <p class="muted">No persons match.</p>}
          <Pager next={list.data.next} previous={list.data.previous} onGo={(url) => setPath(pathOf(url))} />
        </>
      )}
    </Page>
  );
}
