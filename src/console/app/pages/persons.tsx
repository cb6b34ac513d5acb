/**
 * Persons: searched as you type (250 ms after the last key; property values and distinct ids), filtered by person
 * properties, sorted by the clicked column as PostHog's persons table is (Created, newest first, by default; Person
 * by the name shown), one page of 50 at a time (GET /persons/ with Quill's `orderBy`).
 */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { pathOf, qs, type Paginated } from '../api';
import { completeFilters, PropertyFilters, type PropertyFilter } from '../components/property-filters';
import { PropertyScope } from '../components/property-input';
import { ErrorNote, Loading, Page, Pager } from '../components/ui';
import { personName, when } from '../lib/format';
import { useDebounced, useGet, useQueryParam } from '../lib/hooks';

export interface PersonRow {
  id: number;
  uuid: string;
  name?: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  created_at: string;
  is_identified?: boolean;
}

const PAGE = 50;
const SEARCH_DELAY_MS = 250;

/** The sortable columns, and the direction a first click gives (PostHog's persons table: newest first). */
const COLUMNS = {
  person: { label: 'Person', first: 'asc' },
  created_at: { label: 'Created', first: 'desc' },
} as const;
type Column = keyof typeof COLUMNS;
type Direction = 'asc' | 'desc';

/** `order` in the address: a column, `-` first for descending (as PostHog's `-created_at`). */
function parseOrder(text: string): { column: Column; dir: Direction } {
  const dir: Direction = text.startsWith('-') ? 'desc' : 'asc';
  const column = text.replace(/^-/, '');
  return column in COLUMNS ? { column: column as Column, dir } : { column: 'created_at', dir: 'desc' };
}

function SortHeader({ column, order, onSort }: { column: Column; order: { column: Column; dir: Direction }; onSort(c: Column, d: Direction): void }) {
  const active = order.column === column;
  const spec = COLUMNS[column];
  const next: Direction = active ? (order.dir === 'asc' ? 'desc' : 'asc') : spec.first;
  return (
    <th aria-sort={active ? (order.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" class="sort" onClick={() => onSort(column, next)}>
        {spec.label}{active ? (order.dir === 'asc' ? ' ▲' : ' ▼') : ''}
      </button>
    </th>
  );
}

export function PersonsPage({ projectId }: { projectId: number }) {
  const [search, setSearch] = useQueryParam('search');
  const [orderText, setOrderText] = useQueryParam('order');
  const [text, setText] = useState(search);
  const typed = useDebounced(text.trim(), SEARCH_DELAY_MS);
  const [filters, setFilters] = useState<PropertyFilter[]>([]);
  const order = parseOrder(orderText);
  const ready = completeFilters(filters);
  const first = `/api/projects/${projectId}/persons/${qs({
    search, properties: ready.length ? JSON.stringify(ready) : undefined,
    orderBy: JSON.stringify([`${order.dir === 'desc' ? '-' : ''}${order.column}`]), limit: PAGE,
  })}`;
  // Another page (the answer's next/previous), until the search, the filters or the order change.
  const [path, setPath] = useState<string | null>(null);
  const list = useGet<Paginated<PersonRow>>(path ?? first);

  // The search text settles: it goes into the address (a reload keeps it) and the list starts over.
  useEffect(() => {
    if (typed === search) return;
    setPath(null);
    setSearch(typed);
  }, [typed]);

  const sort = (column: Column, dir: Direction) => {
    setPath(null);
    setOrderText(column === 'created_at' && dir === 'desc' ? '' : `${dir === 'desc' ? '-' : ''}${column}`);
  };
  return (
    <Page title="Persons" testId="persons-page">
      <div class="toolbar">
        <input type="search" aria-label="search persons" placeholder="Search by e-mail, name or distinct id" value={text}
          onInput={(e) => setText(e.currentTarget.value)} />
      </div>
      <PropertyScope projectId={projectId}><PropertyFilters value={filters} onChange={(f) => { setPath(null); setFilters(f); }} types={['person']} /></PropertyScope>
      <ErrorNote error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <table class="list" data-testid="person-list" aria-busy={list.loading}>
            <thead>
              <tr>
                <SortHeader column="person" order={order} onSort={sort} />
                <th>Distinct ids</th>
                <SortHeader column="created_at" order={order} onSort={sort} />
              </tr>
            </thead>
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
