/** One tile of a dashboard: its insight's name, kind and effective date range, and the answer drawn by its kind's view. */
import type { ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { dateRangeText } from '../lib/date-range-text';
import { kindOf } from '../lib/insight-kinds';
import { InsightResult } from './insight-result';
import { SqlAnswer } from './sql-answer';
import { sqlOfQuery } from '../lib/sql-insight';
import { SharedViewContext } from '../lib/shared-view';

export interface TileInsight {
  id: number;
  name: string;
  filters: Record<string, any>;
  query: Record<string, any> | null;
  result: unknown;
  /** A SQL insight's column names (its result is rows). */
  columns?: string[] | null;
  last_refresh: string | null;
}

export interface Tile {
  id: number;
  layouts: Record<string, unknown>;
  color: string | null;
  insight: TileInsight;
}

/**
 * The range the tile's answer covers, in words: the range of the query it was computed with (the dashboard's
 * override when there is one), else its filters'. Retention counts periods back from its end date.
 */
export function tileRangeText(i: TileInsight): string {
  const source = i.query?.kind === 'InsightVizNode' ? i.query.source : i.query;
  const range = (source?.dateRange ?? {}) as { date_from?: string | null; date_to?: string | null };
  const from = range.date_from ?? i.filters.date_from;
  const to = range.date_to !== undefined ? range.date_to : i.filters.date_to;
  if (i.filters.insight === 'RETENTION' && !from) {
    const n = i.filters.total_intervals ?? 8;
    const period = String(i.filters.period ?? 'Day').toLowerCase();
    return `${n} ${period}s until ${to ?? 'today'}`;
  }
  return dateRangeText(from, to);
}

const KIND_OF_QUERY: Record<string, string> = {
  TrendsQuery: 'TRENDS', FunnelsQuery: 'FUNNELS', RetentionQuery: 'RETENTION', LifecycleQuery: 'LIFECYCLE', StickinessQuery: 'STICKINESS', PathsQuery: 'PATHS',
};

/** The legacy filters a tile is drawn with: an insight saved by the API with a query only gets its kind from the query. */
function drawnFilters(i: TileInsight): Record<string, any> {
  if (i.filters.insight) return i.filters;
  const source = i.query?.kind === 'InsightVizNode' ? i.query.source : i.query;
  return { ...i.filters, insight: KIND_OF_QUERY[String(source?.kind)] ?? 'TRENDS' };
}

/** `onRemove` absent: a shared dashboard's tile (no link to the insight's page, nothing to remove). */
export function DashboardTile(props: { projectId: number; tile: Tile; handle: ComponentChildren; onRemove?(): void }) {
  const i = props.tile.insight;
  const shared = useContext(SharedViewContext) !== null;
  const filters = drawnFilters(i);
  const sql = sqlOfQuery(i.query);
  const kind = sql ? { kind: 'sql', title: 'SQL' } : kindOf(filters.insight);
  return (
    <article class="tile card" data-testid="dashboard-tile" data-kind={kind?.kind} data-insight-id={i.id}>
      <header class="tile-head">
        {props.handle}
        <div class="tile-title">
          <h3>{shared ? i.name || 'Insight' : <Link href={`/project/${props.projectId}/insights/saved/${i.id}`}>{i.name || `Insight ${i.id}`}</Link>}</h3>
          <span class="muted small">
            <span data-testid="tile-kind">{kind?.title ?? 'Query'}</span> · <span data-testid="tile-range">{tileRangeText(i)}</span>
          </span>
        </div>
        {props.onRemove && <button type="button" class="ghost danger" aria-label={`Remove ${i.name || `Insight ${i.id}`} from the dashboard`} onClick={props.onRemove}>×</button>}
      </header>
      <div class="tile-body">
        {i.result === null || i.result === undefined
          ? <p class="muted">Not computed yet: refresh the dashboard.</p>
          : sql
            ? <SqlAnswer result={{ columns: i.columns ?? [], results: i.result as unknown[][] }} display={sql.display} compact />
            : <InsightResult filters={filters} result={i.result} projectId={props.projectId} compact />}
      </div>
    </article>
  );
}
