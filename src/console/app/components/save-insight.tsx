import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { DATE_FROM_CHOICES } from '../lib/date-range-text';
import { useGet } from '../lib/hooks';
import { useSaveInsight } from '../lib/use-insight';
import { DashboardPicker } from './dashboard-picker';
import { ErrorNote } from './ui';
import { ShareButton } from './share-panel';

/** The dashboard a new insight was started from (`?dashboard=`), which its save form offers checked. */
function dashboardFromAddress(): number[] {
  const id = Number(new URLSearchParams(location.search).get('dashboard'));
  return Number.isSafeInteger(id) && id > 0 ? [id] : [];
}

/**
 * The name field and save button under every insight. A new insight is saved onto the dashboards ticked here; a
 * saved one is added to or taken off a dashboard as soon as its box changes ("Add to dashboard").
 */
export function SaveInsight(props: { projectId: number; insightId: number | null; initialName: string; filters: Record<string, unknown> }) {
  const [name, setName] = useState(props.initialName);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [dashboards, setDashboards] = useState<number[]>(dashboardFromAddress);
  const save = useSaveInsight(props.projectId, props.insightId);
  useEffect(() => setName(props.initialName), [props.initialName]);
  return (
    <div class="save-insight">
      <form class="row" onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          setNote(await save(name, props.filters, props.insightId === null ? dashboards : undefined));
        } catch (err) {
          setError(err as Error);
        }
      }}>
        <input aria-label="insight name" placeholder="Insight name" required value={name} onInput={(e) => { setNote(null); setName(e.currentTarget.value); }} />
        <button type="submit" class="primary">{props.insightId !== null ? 'Save' : 'Save insight'}</button>
        {props.insightId !== null && <ShareButton path={`/api/projects/${props.projectId}/insights/${props.insightId}/sharing/`} what="this insight" />}
        {note && <span class="ok" role="status">{note}</span>}
        <ErrorNote error={error} />
      </form>
      {props.insightId === null
        ? <DashboardPicker projectId={props.projectId} value={dashboards} onToggle={(id, on) => setDashboards(on ? [...dashboards, id] : dashboards.filter((d) => d !== id))} />
        : <SavedInsightDashboards projectId={props.projectId} insightId={props.insightId} />}
    </div>
  );
}

/** A saved insight's dashboards, changed at once (PATCH of the insight's `dashboards`, as PostHog takes it). */
function SavedInsightDashboards(props: { projectId: number; insightId: number }) {
  const path = `/api/projects/${props.projectId}/insights/${props.insightId}/`;
  // force_cache: only the membership is wanted here, not a computed result.
  const insight = useGet<{ dashboards: number[] }>(`${path}?refresh=force_cache`);
  const [value, setValue] = useState<number[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const current = value ?? insight.data?.dashboards ?? null;
  if (current === null) return null;
  return (
    <div class="row" data-testid="saved-insight-dashboards">
      <DashboardPicker projectId={props.projectId} value={current} disabled={busy} onToggle={async (id, on) => {
        const next = on ? [...current, id] : current.filter((d) => d !== id);
        // The box shows the choice at once; a refusal puts it back.
        setValue(next);
        setBusy(true);
        setError(null);
        setNote(null);
        try {
          const saved = await api.patch<{ dashboards: number[] }>(path, { dashboards: next });
          setValue(saved.dashboards);
          setNote(on ? 'Added to the dashboard.' : 'Taken off the dashboard.');
        } catch (err) {
          setValue(current);
          setError(err as Error);
        } finally {
          setBusy(false);
        }
      }} />
      {note && <span class="ok" role="status" data-testid="dashboards-saved">{note}</span>}
      <ErrorNote error={error} />
    </div>
  );
}

/** The date range choices every insight offers (the stored value is kept even when it is not one of them). */
export function DateFrom(props: { value: string; onChange(v: string): void }) {
  const choices = [...DATE_FROM_CHOICES];
  if (!choices.some(([v]) => v === props.value)) choices.push([props.value, props.value]);
  return (
    <select aria-label="date from" value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
      {choices.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
    </select>
  );
}
