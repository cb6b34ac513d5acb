/**
 * Persons, as PostHog's persons list: an `ActorsQuery` (POST /query/) searched as you type (e-mail, name, uuid or
 * distinct id, 250 ms after the last key), filtered by person properties, sorted by the column whose header was
 * clicked (Created, newest first, by default), one page of 50 at a time.
 */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { request } from '../api';
import { completeFilters, PropertyFilters, type PropertyFilter } from '../components/property-filters';
import { PropertyScope } from '../components/property-input';
import { ErrorNote, Loading, Page, Pager } from '../components/ui';
import { personName, when } from '../lib/format';
import { useDebounced, useQueryParam } from '../lib/hooks';

export interface PersonRow {
  id: number;
  uuid: string;
  name?: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  created_at: string;
  is_identified?: boolean;
}

/** A person as the ActorsQuery's `person` column gives it (`id` is the uuid). */
interface Actor {
  id: string;
  properties?: Record<string, unknown>;
  distinct_ids?: string[];
  created_at?: string;
}

interface ActorsAnswer {
  results: [Actor, string][];
  hasMore: boolean;
}

const PAGE = 50;
const SEARCH_DELAY_MS = 250;

/**
 * The sortable columns: the ActorsQuery `orderBy` of each direction, and the direction a first click gives. The
 * Person column is sorted by what it shows: the e-mail, else the name (case aside); persons with neither (shown by
 * a distinct id) come after, newest first.
 */
const DISPLAY_NAME = 'lower(coalesce(toString(properties.email), toString(properties.name)))';
const COLUMNS = {
  person: { label: 'Person', first: 'asc', orderBy: (dir: Direction) => [`${DISPLAY_NAME} ${dir.toUpperCase()}`, 'created_at DESC'] },
  created_at: { label: 'Created', first: 'desc', orderBy: (dir: Direction) => [`created_at ${dir.toUpperCase()}`] },
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
  const [offset, setOffset] = useState(0);
  const [state, setState] = useState<{ data: ActorsAnswer | null; error: Error | null; loading: boolean }>({ data: null, error: null, loading: true });
  const order = parseOrder(orderText);
  const ready = completeFilters(filters);
  const filterKey = JSON.stringify(ready);

  // The search text settles: it goes into the address (a reload keeps it) and the list starts over.
  useEffect(() => {
    if (typed === search) return;
    setSearch(typed);
    setOffset(0);
  }, [typed]);

  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    const query = {
      kind: 'ActorsQuery', select: ['person', 'created_at'], search: search || undefined,
      properties: ready.length ? ready : undefined, orderBy: COLUMNS[order.column].orderBy(order.dir), limit: PAGE, offset,
    };
    // The newest request wins: a slower answer to an older search never replaces a newer one.
    request<ActorsAnswer>('POST', `/api/projects/${projectId}/query/`, { query }, ctl.signal).then(
      (data) => setState({ data, error: null, loading: false }),
      (error: Error) => {
        if (!ctl.signal.aborted) setState({ data: null, error, loading: false });
      },
    );
    return () => ctl.abort();
  }, [projectId, search, filterKey, order.column, order.dir, offset]);

  const sort = (column: Column, dir: Direction) => {
    setOrderText(column === 'created_at' && dir === 'desc' ? '' : `${dir === 'desc' ? '-' : ''}${column}`);
    setOffset(0);
  };
  const rows = state.data?.results ?? [];
  return (
    <Page title="Persons" testId="persons-page">
      <div class="toolbar">
        <input type="search" aria-label="search persons" placeholder="Search by e-mail, name or distinct id" value={text}
          onInput={(e) => setText(e.currentTarget.value)} />
      </div>
      <PropertyScope projectId={projectId}><PropertyFilters value={filters} onChange={(f) => { setOffset(0); setFilters(f); }} types={['person']} /></PropertyScope>
      <ErrorNote error={state.error} />
      <Loading when={state.loading && !state.data} />
      {state.data && (
        <>
          <table class="list" data-testid="person-list" aria-busy={state.loading}>
            <thead>
              <tr>
                <SortHeader column="person" order={order} onSort={sort} />
                <th>Distinct ids</th>
                <SortHeader column="created_at" order={order} onSort={sort} />
              </tr>
            </thead>
            <tbody>
              {rows.map(([p]) => (
                <tr key={p.id}>
                  <td><Link href={`/project/${projectId}/persons/${p.id}`}>{personName(p)}</Link></td>
                  <td class="truncate">{(p.distinct_ids ?? []).join(', ')}</td>
                  <td>{p.created_at ? when(p.created_at) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length === 0 && <p class="muted">No persons match.</p>}
          <Pager next={state.data.hasMore ? String(offset + PAGE) : null} previous={offset > 0 ? String(Math.max(0, offset - PAGE)) : null}
            onGo={(to) => setOffset(Number(to))} />
        </>
      )}
    </Page>
  );
}
