/** An insight's answer drawn by its kind's view (dashboard tiles). */
import type { PathEdge } from './paths-flow';
import { PathsFlow } from './paths-flow';
import { FunnelView, type FunnelStep } from './funnel-view';
import { RetentionGrid, type RetentionRow } from './retention-grid';
import { TrendView } from './trend-view';
import type { TrendResult } from '../lib/trends-filters';

export function InsightResult(props: { filters: Record<string, any>; result: unknown; projectId: number; compact?: boolean }) {
  switch (props.filters.insight) {
    case 'FUNNELS':
      return <FunnelView result={props.result as FunnelStep[]} projectId={props.projectId} compact={props.compact} />;
    case 'RETENTION':
      return <RetentionGrid result={props.result as RetentionRow[]} projectId={props.projectId} compact={props.compact} />;
    case 'PATHS':
      return <PathsFlow result={props.result as PathEdge[]} projectId={props.projectId} height={props.compact ? 260 : undefined} />;
    default:
      return <TrendView result={props.result as TrendResult[]} display={props.filters.insight === 'LIFECYCLE' ? 'ActionsStackedBar' : props.filters.display} projectId={props.projectId} compact={props.compact} />;
  }
}
