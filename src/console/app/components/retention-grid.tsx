/**
 * A retention answer as a cohort grid: a row per starting period, its size, then the share of it that came back
 * in each later period (shaded by that share); a cell opens its persons.
 */
import { useContext, useState } from 'preact/hooks';
import { shareText, visibleCohorts } from '../lib/retention-rows';
import { PersonsDialog } from './persons-dialog';
import { SharedViewContext } from '../lib/shared-view';

export interface RetentionRow {
  label: string;
  date: string;
  values: { count: number; people_url?: string }[];
}

export function RetentionGrid(props: { result: RetentionRow[]; projectId: number; compact?: boolean }) {
  const [open, setOpen] = useState<{ title: string; url: string | null; count: number } | null>(null);
  const shared = useContext(SharedViewContext);
  const { rows, hiddenEmpty } = visibleCohorts(props.result, props.compact ?? false);
  const periods = Math.max(0, ...props.result.map((r) => r.values.length));
  return (
    <div class="scroll-x">
      <table class="list retention" data-testid="retention-grid">
        <thead><tr><th>Cohort</th><th>Persons</th>{Array.from({ length: periods }, (_, i) => <th key={i}>{i === 0 ? 'Period 0' : `+${i}`}</th>)}</tr></thead>
        <tbody>
          {rows.map((row, r) => {
            const size = row.values[0]?.count ?? 0;
            return (
              <tr key={r} data-testid="retention-row">
                <th title={row.label}>{row.date ? row.date.slice(0, 10) : row.label}</th>
                <td>{size}</td>
                {row.values.map((v, i) => {
                  const share = size > 0 ? v.count / size : 0;
                  return (
                    <td key={i} class="clickable cell" data-count={v.count} style={{ background: `rgba(29, 74, 255, ${(0.08 + share * 0.7).toFixed(2)})`, color: share > 0.55 ? '#fff' : undefined }}
                      onClick={() => setOpen({ title: `${row.label || row.date} · period ${i}`, url: v.people_url ?? null, count: v.count })}>
                      {shareText(v.count, size)}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
      {hiddenEmpty > 0 && <p class="muted" data-testid="retention-hidden">{hiddenEmpty === 1 ? '1 cohort of no one is not shown.' : `${hiddenEmpty} cohorts of no one are not shown.`}</p>}
      {open && !shared && <PersonsDialog projectId={props.projectId} title={open.title} url={open.url} count={open.count} onClose={() => setOpen(null)} />}
    </div>
  );
}
