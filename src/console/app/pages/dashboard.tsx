/**
 * One dashboard: its own tiles from `GET dashboards/:id` (each insight computed there, over the dashboard's date
 * range override when it has one), laid out on the 12-column grid. Moving, resizing and removing a tile, the
 * override and adding an insight are stored by the API at once; Refresh asks for every result afresh.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type Paginated } from '../api';
import { DashboardGrid } from '../components/dashboard-grid';
import { DashboardTile, type Tile } from '../components/dashboard-tile';
import { ShareButton } from '../components/share-panel';
import { ErrorNote, Loading, Page } from '../components/ui';
import { changedCells, placementOf, type Placement } from '../lib/dashboard-layout';
import { DATE_FROM_CHOICES, dateRangeText } from '../lib/date-range-text';
import { ago } from '../lib/format';
import { useGet } from '../lib/hooks';

interface Dashboard {
  id: number;
  name: string;
  description: string;
  filters: { date_from?: string; date_to?: string };
  tiles: Tile[];
  last_refresh: string | null;
}

export function DashboardPage({ projectId, dashboardId }: { projectId: number; dashboardId: number }) {
  const path = `/api/projects/${projectId}/dashboards/${dashboardId}/`;
  const [dashboard, setDashboard] = useState<Dashboard | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState<'loading' | 'refreshing' | null>('loading');
  const latest = useRef(0);

  const load = async (refresh: boolean) => {
    const call = ++latest.current;
    setBusy(refresh ? 'refreshing' : 'loading');
    try {
      const d = await api.get<Dashboard>(refresh ? `${path}?refresh=true` : path);
      if (call === latest.current) {
        setDashboard(d);
        setError(null);
      }
    } catch (err) {
      if (call === latest.current) setError(err as Error);
    } finally {
      if (call === latest.current) setBusy(null);
    }
  };
  useEffect(() => {
    setDashboard(null);
    load(false);
  }, [path]);

  /** A change stored by the API, then the dashboard read again (its tiles' results depend on it). */
  const change = async (body: Record<string, unknown>, reload = true) => {
    setError(null);
    try {
      await api.patch(path, body);
      if (reload) await load(false);
    } catch (err) {
      // What is shown went ahead of the API (a move, a removal): show what it stores instead.
      await load(false);
      setError(err as Error);
    }
  };

  const placement = useMemo(() => placementOf(dashboard?.tiles ?? []), [dashboard]);
  const commit = (next: Placement) => {
    // Tiles placed by default (no stored layout yet) are stored too, so the API holds the whole layout.
    const unstored = new Set((dashboard?.tiles ?? []).filter((t) => !t.layouts?.sm).map((t) => t.id));
    const moved = new Set(changedCells(placement, next).map(([id]) => id));
    const changed = [...next].filter(([id]) => moved.has(id) || unstored.has(id));
    if (!dashboard || changed.length === 0) return;
    // Shown at once; the answer of the PATCH carries only cached results, so the tiles keep theirs.
    const byId = new Map(changed);
    const tiles = dashboard.tiles.map((t) => (byId.has(t.id) ? { ...t, layouts: { ...t.layouts, sm: byId.get(t.id)! } } : t));
    setDashboard({ ...dashboard, tiles });
    change({ tiles: changed.map(([id, cell]) => ({ id, layouts: { ...dashboard.tiles.find((t) => t.id === id)!.layouts, sm: cell } })) }, false);
  };
  const remove = (tile: Tile) => {
    if (!dashboard || !confirm(`Remove "${tile.insight.name || `Insight ${tile.insight.id}`}" from this dashboard? The insight stays saved.`)) return;
    setDashboard({ ...dashboard, tiles: dashboard.tiles.filter((t) => t.id !== tile.id) });
    change({ tiles: [{ id: tile.id, deleted: true }] }, false);
  };

  if (!dashboard) {
    return (
      <Page title="Dashboard" testId="dashboard-page">
        <ErrorNote error={error} />
        <Loading when={busy !== null} />
      </Page>
    );
  }
  return (
    <Page title={dashboard.name || `Dashboard ${dashboard.id}`} testId="dashboard-page" actions={
      <>
        <span class="muted small" data-testid="last-refresh" data-last-refresh={dashboard.last_refresh ?? ''} title={dashboard.last_refresh ?? ''}>
          {busy === 'refreshing' ? 'Refreshing…' : dashboard.last_refresh ? `Computed ${ago(dashboard.last_refresh)}` : ''}
        </span>
        <button type="button" onClick={() => load(true)} disabled={busy !== null}>Refresh</button>
        <ShareButton path={`${path}sharing/`} what="this dashboard" />
      </>
    }>
      <p class="muted"><Link href={`/project/${projectId}/dashboard`}>All dashboards</Link>{dashboard.description && ` · ${dashboard.description}`}</p>
      <div class="toolbar dashboard-toolbar">
        <DateOverride filters={dashboard.filters} onChange={(filters) => change({ filters })} />
        <AddInsight projectId={projectId} dashboard={dashboard} onAdded={() => load(false)} />
        <Link class="button" href={`/project/${projectId}/insights/trends?dashboard=${dashboard.id}`}>New insight</Link>
      </div>
      <ErrorNote error={error} />
      {dashboard.tiles.length === 0
        ? <p class="muted" data-testid="dashboard-empty">No tiles yet: add a saved insight, or build a new one and tick this dashboard when saving it.</p>
        : <DashboardGrid placement={placement} onCommit={commit} tiles={dashboard.tiles.map((t) => ({
          id: t.id,
          title: t.insight.name || `Insight ${t.insight.id}`,
          render: (handle) => <DashboardTile projectId={projectId} tile={t} handle={handle} onRemove={() => remove(t)} />,
        }))} />}
    </Page>
  );
}

/** The dashboard's date range override: none (each tile its own), a relative range, or two dates. */
function DateOverride(props: { filters: Dashboard['filters']; onChange(filters: Dashboard['filters']): void }) {
  const from = props.filters.date_from ?? '';
  const isChoice = from === '' || DATE_FROM_CHOICES.some(([v]) => v === from);
  const [custom, setCustom] = useState(!isChoice);
  const [dates, setDates] = useState({ from: isChoice ? '' : from, to: props.filters.date_to ?? '' });
  useEffect(() => {
    setCustom(!isChoice);
    if (!isChoice) setDates({ from, to: props.filters.date_to ?? '' });
  }, [props.filters.date_from, props.filters.date_to]);
  return (
    <div class="row tight" data-testid="date-override">
      <select aria-label="dashboard date range" value={custom ? 'custom' : from} onChange={(e) => {
        const v = e.currentTarget.value;
        if (v === 'custom') return setCustom(true);
        setCustom(false);
        props.onChange(v ? { date_from: v } : {});
      }}>
        <option value="">Each tile's own dates</option>
        {DATE_FROM_CHOICES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
        <option value="custom">Custom dates…</option>
      </select>
      {custom && (
        <form class="row tight" onSubmit={(e) => {
          e.preventDefault();
          props.onChange(dates.to ? { date_from: dates.from, date_to: dates.to } : { date_from: dates.from });
        }}>
          <input type="date" aria-label="dashboard date from" required value={dates.from} onInput={(e) => setDates({ ...dates, from: e.currentTarget.value })} />
          <input type="date" aria-label="dashboard date to" value={dates.to} onInput={(e) => setDates({ ...dates, to: e.currentTarget.value })} />
          <button type="submit">Apply</button>
        </form>
      )}
      {props.filters.date_from && <span class="badge" data-testid="override-badge">Every tile: {dateRangeText(props.filters.date_from, props.filters.date_to)}</span>}
    </div>
  );
}

interface SavedInsight {
  id: number;
  name: string;
  dashboards: number[];
}

/** A saved insight put on this dashboard (PATCH of the insight's `dashboards`, as PostHog takes it). */
function AddInsight(props: { projectId: number; dashboard: Dashboard; onAdded(): void }) {
  const list = useGet<Paginated<SavedInsight>>(`/api/projects/${props.projectId}/insights/?limit=100`);
  const [chosen, setChosen] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const on = new Set(props.dashboard.tiles.map((t) => t.insight.id));
  const candidates = (list.data?.results ?? []).filter((i) => !on.has(i.id));
  return (
    <form class="row tight" onSubmit={async (e) => {
      e.preventDefault();
      const insight = candidates.find((i) => String(i.id) === chosen);
      if (!insight) return;
      setError(null);
      try {
        await api.patch(`/api/projects/${props.projectId}/insights/${insight.id}/`, { dashboards: [...new Set([...insight.dashboards, props.dashboard.id])] });
        setChosen('');
        list.reload();
        props.onAdded();
      } catch (err) {
        setError(err as Error);
      }
    }}>
      <select aria-label="saved insight to add" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
        <option value="">Add a saved insight…</option>
        {candidates.map((i) => <option key={i.id} value={i.id}>{i.name || `Insight ${i.id}`}</option>)}
      </select>
      <button type="submit" disabled={!chosen}>Add</button>
      <ErrorNote error={error} />
    </form>
  );
}
