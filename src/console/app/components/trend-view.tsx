/**
 * A trends answer: the chart, a table of every value (each cell opens the persons behind it), and the persons
 * dialog fed by the series' `persons_urls`. Used by the trends page and by dashboard tiles.
 */
import { useContext, useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { loadAnnotations, markersFor, type AnnotationItem } from '../lib/annotations';
import { seriesLabel, type TrendResult } from '../lib/trends-filters';
import { SessionContext } from '../session';
import { SharedViewContext } from '../lib/shared-view';
import { AnnotatePoint } from './annotate-point';
import { PersonsDialog } from './persons-dialog';
import { TimeSeriesChart } from './time-series-chart';

export function TrendView(props: { result: TrendResult[]; display: string; projectId: number; compact?: boolean }) {
  const [point, setPoint] = useState<{ series: number; index: number } | null>(null);
  const labels = props.result[0]?.labels ?? [];
  const series = useMemo(() => props.result.map((r) => ({ label: seriesLabel(r), data: r.data })), [props.result]);
  // Trends and lifecycle buckets are dates; stickiness counts intervals (`3 days`).
  const xLabel = /^\d{4}-\d\d-\d\d/.test(String(props.result[0]?.days?.[0] ?? '')) ? 'Date' : 'Interval';
  const display = props.display === 'ActionsBar' ? 'bar' : props.display === 'ActionsStackedBar' ? 'stacked' : 'line';
  // The project's annotations on date buckets (stickiness buckets are intervals: none there).
  const [annotations, setAnnotations] = useState<AnnotationItem[]>([]);
  // A shared page (src/console/app/lib/shared-view.ts) has no private API: no annotations, no persons behind points.
  const shared = useContext(SharedViewContext);
  const session = useContext(SessionContext);
  const [annotationsAsked, setAnnotationsAsked] = useState(0);
  useEffect(() => {
    if (shared) return;
    let live = true;
    loadAnnotations(props.projectId, (path) => api.get(path)).then((list) => live && setAnnotations(list));
    return () => {
      live = false;
    };
  }, [props.projectId, annotationsAsked]);
  const timeZone = shared?.timezone ?? (session?.projects.find((p) => p.id === props.projectId)?.timezone || 'UTC');
  const days = (props.result[0]?.days ?? []).map(String);
  const markers = useMemo(() => (xLabel === 'Date' ? markersFor(annotations, days, timeZone) : []), [annotations, days.join(','), timeZone, xLabel]);
  if (props.result.length === 0) return <p class="muted">No data for these filters.</p>;
  return (
    <div class="trend-view">
      <TimeSeriesChart testId="trend-chart" labels={labels} series={series} display={display} height={props.compact ? 200 : 340}
        compact={props.compact} markers={markers} xLabel={xLabel} onPointClick={shared ? undefined : (s, i) => setPoint({ series: s, index: i })} />
      {!props.compact && (
        <div class="scroll-x">
          <table class="list values" data-testid="trend-table">
            <thead><tr><th>Series</th>{labels.map((l, i) => <th key={i}>{l}</th>)}<th title="The sum of the row's values, as PostHog's table shows it: for unique users, a person active in several intervals counts once in each">Total (sum)</th></tr></thead>
            <tbody>
              {props.result.map((r, s) => (
                <tr key={s} data-testid="trend-row">
                  <th>{seriesLabel(r)}</th>
                  {r.data.map((v, i) => (
                    <td key={i} class="value clickable" onClick={() => setPoint({ series: s, index: i })}>{Number.isInteger(v) ? v : v.toFixed(2)}</td>
                  ))}
                  <td>{r.aggregated_value ?? r.count ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {point && !shared && (() => {
        const r = props.result[point.series]!;
        const day = xLabel === 'Date' ? days[point.index] : undefined;
        return (
          <PersonsDialog projectId={props.projectId} title={`${seriesLabel(r)} · ${r.labels[point.index]}`} summary={`${r.data[point.index]} at this point.`}
            url={r.persons_urls?.[point.index]?.url} onClose={() => setPoint(null)}>
            {day && <AnnotatePoint projectId={props.projectId} day={day} timeZone={timeZone} onAdded={() => setAnnotationsAsked((n) => n + 1)} />}
          </PersonsDialog>
        );
      })()}
    </div>
  );
}
