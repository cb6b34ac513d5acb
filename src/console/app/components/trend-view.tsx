/**
 * A trends answer: the chart, a table of every value (each cell opens the persons behind it), and the persons
 * dialog fed by the series' `persons_urls`. Used by the trends page and by dashboard tiles.
 */
import { useMemo, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, pathOf } from '../api';
import { personName } from '../lib/format';
import { seriesLabel, type TrendResult } from '../lib/trends-filters';
import { TimeSeriesChart } from './time-series-chart';
import { ErrorNote, Modal } from './ui';

interface PersonsAnswer {
  results: { people: { id: string; uuid: string; name?: string; distinct_ids: string[]; properties: Record<string, unknown> }[]; count: number }[];
  next: string | null;
}

export function TrendView(props: { result: TrendResult[]; display: string; projectId: number; compact?: boolean }) {
  const [point, setPoint] = useState<{ series: number; index: number } | null>(null);
  const labels = props.result[0]?.labels ?? [];
  const series = useMemo(() => props.result.map((r) => ({ label: seriesLabel(r), data: r.data })), [props.result]);
  const isBar = props.display === 'ActionsBar';
  if (props.result.length === 0) return <p class="muted">No data for these filters.</p>;
  return (
    <div class="trend-view">
      <TimeSeriesChart testId="trend-chart" labels={labels} series={series} display={isBar ? 'bar' : 'line'} height={props.compact ? 200 : 340}
        onPointClick={(s, i) => setPoint({ series: s, index: i })} />
      {!props.compact && (
        <div class="scroll-x">
          <table class="list values" data-testid="trend-table">
            <thead><tr><th>Series</th>{labels.map((l, i) => <th key={i}>{l}</th>)}<th>Total</th></tr></thead>
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
      {point && <PersonsDialog projectId={props.projectId} result={props.result[point.series]!} index={point.index} onClose={() => setPoint(null)} />}
    </div>
  );
}

function PersonsDialog(props: { projectId: number; result: TrendResult; index: number; onClose(): void }) {
  const url = props.result.persons_urls?.[props.index]?.url;
  const [pages, setPages] = useState<PersonsAnswer[]>([]);
  const [error, setError] = useState<Error | null>(null);
  const load = (path: string) => api.get<PersonsAnswer>(path).then((p) => setPages((prev) => [...prev, p]), setError);
  useMemo(() => {
    if (url) load(url.startsWith('/') || url.startsWith('http') ? pathOf(url) : `/${url}`);
  }, [url]);
  const people = pages.flatMap((p) => p.results[0]?.people ?? []);
  const next = pages[pages.length - 1]?.next ?? null;
  return (
    <Modal title={`${seriesLabel(props.result)} · ${props.result.labels[props.index]}`} onClose={props.onClose}>
      <div data-testid="persons-dialog">
        <p>{props.result.data[props.index]} at this point.</p>
        {!url && <p class="muted">No persons list for this point.</p>}
        <ErrorNote error={error} />
        <ul class="people">
          {people.map((p) => (
            <li key={p.uuid ?? p.id} data-testid="point-person"><Link href={`/project/${props.projectId}/persons/${p.uuid ?? p.id}`}>{personName(p)}</Link></li>
          ))}
        </ul>
        {next && <button onClick={() => load(pathOf(next))}>More</button>}
      </div>
    </Modal>
  );
}
