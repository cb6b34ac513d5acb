/** The project's dashboards as checkboxes: which ones an insight is on. */
import type { Paginated } from '../api';
import { useGet } from '../lib/hooks';

export interface DashboardSummary {
  id: number;
  name: string;
  description: string;
  pinned: boolean;
}

export function DashboardPicker(props: { projectId: number; value: number[]; onToggle(id: number, on: boolean): void; disabled?: boolean }) {
  const list = useGet<Paginated<DashboardSummary>>(`/api/projects/${props.projectId}/dashboards/?limit=200`);
  if (!list.data || list.data.results.length === 0) return null;
  return (
    <fieldset class="dashboard-picker" data-testid="dashboard-picker">
      <legend>On dashboards</legend>
      {list.data.results.map((d) => (
        <label key={d.id} class="check">
          <input type="checkbox" checked={props.value.includes(d.id)} disabled={props.disabled}
            onChange={(e) => props.onToggle(d.id, e.currentTarget.checked)} />
          {d.name || `Dashboard ${d.id}`}
        </label>
      ))}
    </fieldset>
  );
}
