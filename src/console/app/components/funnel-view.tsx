/**
 * A funnel's steps: bars of how many reached each step (uPlot), and a table with the conversion from the first and
 * the previous step and the median time to convert; a count opens who converted, a drop-off who did not.
 */
import { useContext, useMemo, useState } from 'preact/hooks';
import { PersonsDialog } from './persons-dialog';
import { TimeSeriesChart } from './time-series-chart';
import { SharedViewContext } from '../lib/shared-view';

export interface FunnelStep {
  name: string;
  custom_name?: string | null;
  order: number;
  count: number;
  median_conversion_time: number | null;
  average_conversion_time: number | null;
  converted_people_url: string | null;
  dropped_people_url: string | null;
  breakdown_value?: unknown;
}

export function duration(seconds: number | null): string {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 86400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} d`;
}

const pct = (a: number, b: number) => (b > 0 ? `${((100 * a) / b).toFixed(1)} %` : '—');

/** Steps of an unbroken-down funnel, or of the first breakdown value's funnel. */
export function stepsOf(result: FunnelStep[] | FunnelStep[][]): FunnelStep[] {
  return Array.isArray(result[0]) ? (result[0] as FunnelStep[]) : (result as FunnelStep[]);
}

export function FunnelView(props: { result: FunnelStep[] | FunnelStep[][]; projectId: number; compact?: boolean }) {
  const steps = stepsOf(props.result);
  const [open, setOpen] = useState<{ title: string; url: string | null; count: number } | null>(null);
  const shared = useContext(SharedViewContext);
  const labels = useMemo(() => steps.map((s, i) => `${i + 1}. ${s.custom_name ?? s.name}`), [props.result]);
  const series = useMemo(() => [{ label: 'persons', data: steps.map((s) => s.count) }], [props.result]);
  if (steps.length === 0) return <p class="muted">No steps.</p>;
  const first = steps[0]!.count;
  return (
    <div class="funnel-view">
      <TimeSeriesChart testId="funnel-chart" labels={labels} series={series} display="bar" height={props.compact ? 200 : 300}
        xLabel="Step" compact={props.compact} onPointClick={(_s, i) => setOpen({ title: `Reached ${labels[i]}`, url: steps[i]!.converted_people_url, count: steps[i]!.count })} />
      {!props.compact && (
        <table class="list" data-testid="funnel-table">
          <thead><tr><th>Step</th><th>Persons</th><th>From first</th><th>From previous</th><th>Dropped</th><th>Median time</th></tr></thead>
          <tbody>
            {steps.map((s, i) => (
              <tr key={i} data-testid="funnel-step">
                <td>{labels[i]}</td>
                <td class="clickable count" onClick={() => setOpen({ title: `Reached ${labels[i]}`, url: s.converted_people_url, count: s.count })}>{s.count}</td>
                <td class="conversion">{pct(s.count, first)}</td>
                <td>{i === 0 ? '' : pct(s.count, steps[i - 1]!.count)}</td>
                <td class={i === 0 ? '' : 'clickable'} onClick={() => i > 0 && setOpen({ title: `Dropped before ${labels[i]}`, url: s.dropped_people_url, count: steps[i - 1]!.count - s.count })}>{i === 0 ? '' : steps[i - 1]!.count - s.count}</td>
                <td>{i === 0 ? '' : duration(s.median_conversion_time)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && !shared && <PersonsDialog projectId={props.projectId} title={open.title} url={open.url} count={open.count} onClose={() => setOpen(null)} />}
    </div>
  );
}
