/**
 * Every insight page, in one chunk loaded on first use (with uPlot and d3-sankey): trends, lifecycle, stickiness,
 * funnels, retention, paths and a saved insight (opened on its kind's page). The dashboards have their own chunk.
 */
import { lazyPage } from '../components/lazy';
import { ErrorNote, Loading, Page } from '../components/ui';
import { sqlOfQuery } from '../lib/sql-insight';
import { useSavedInsight } from '../lib/use-insight';
import { FunnelPage } from './funnel';
import { PathsPage } from './paths';
import { RetentionPage } from './retention';
import { TrendsPage } from './trends';

export { FunnelPage, PathsPage, RetentionPage, TrendsPage };

/** The SQL page, with its editor, in a chunk of its own: a saved SQL insight opens there. */
const SqlPage = lazyPage(() => import('./sql').then((m) => m.SqlPage));

export function SavedInsightPage({ projectId, insightId }: { projectId: number; insightId: number }) {
  const saved = useSavedInsight(projectId, insightId);
  if (saved.error) return <Page title="Insight"><ErrorNote error={saved.error} /></Page>;
  if (!saved.data) return <Loading when />;
  const p = { projectId, insightId };
  if (sqlOfQuery(saved.data.query)) return <SqlPage {...p} />;
  switch (saved.data.filters.insight) {
    case 'FUNNELS':
      return <FunnelPage {...p} />;
    case 'RETENTION':
      return <RetentionPage {...p} />;
    case 'PATHS':
      return <PathsPage {...p} />;
    case 'LIFECYCLE':
    case 'STICKINESS':
      return <TrendsPage {...p} insight={saved.data.filters.insight} />;
    default:
      return <TrendsPage {...p} />;
  }
}
