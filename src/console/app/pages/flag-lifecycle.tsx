/**
 * A flag's life cycle on its page: usage (evaluations per day as bars, `$feature_flag_called` events, last use and
 * PostHog's status), scheduled changes (add, move, cancel; what ran and what failed), and its history field by field
 * with a one-click revert to any version it had.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, type Paginated } from '../api';
import { ErrorNote, Field, Loading } from '../components/ui';
import { ago, numberText, when } from '../lib/format';
import { useGet } from '../lib/hooks';

interface Usage {
  results: { date: string; evaluations: number; called: number }[];
  total: { evaluations: number; called: number };
  last_called_at: string | null;
  status: string;
  status_reason: string;
}

/** Evaluations per day as SVG bars (no chart library: this page is in the first bundle). */
function UsageBars({ days }: { days: Usage['results'] }) {
  const width = 720;
  const height = 140;
  const max = Math.max(1, ...days.map((d) => d.evaluations + d.called));
  const step = width / days.length;
  return (
    <svg class="usage-bars" viewBox={`0 0 ${width} ${height + 18}`} role="img" aria-label="evaluations per day" data-testid="usage-chart" data-points={JSON.stringify(days.map((d) => d.evaluations))}>
      {days.map((d, i) => {
        const h = Math.round(((d.evaluations + d.called) / max) * height);
        const called = Math.round((d.called / max) * height);
        return (
          <g key={d.date}>
            <title>{`${d.date}: ${numberText(d.evaluations)} evaluations, ${numberText(d.called)} $feature_flag_called`}</title>
            <rect x={i * step + 1} y={height - h} width={Math.max(1, step - 2)} height={h - called} class="bar-evaluations" />
            <rect x={i * step + 1} y={height - called} width={Math.max(1, step - 2)} height={called} class="bar-called" />
          </g>
        );
      })}
      <line x1={0} x2={width} y1={height} y2={height} class="axis" />
      <text x={0} y={height + 14} class="axis-label">{days[0]?.date}</text>
      <text x={width} y={height + 14} text-anchor="end" class="axis-label">{days.at(-1)?.date}</text>
    </svg>
  );
}

export function FlagUsageTab({ base, flagId }: { base: string; flagId: string }) {
  const [days, setDays] = useState('30');
  const usage = useGet<Usage>(`${base}/${flagId}/usage/?days=${days}`);
  return (
    <div data-testid="flag-usage">
      <div class="toolbar">
        <select aria-label="usage days" value={days} onChange={(e) => setDays(e.currentTarget.value)}>
          <option value="7">Last 7 days</option>
          <option value="30">Last 30 days</option>
          <option value="90">Last 90 days</option>
        </select>
      </div>
      <ErrorNote error={usage.error} />
      <Loading when={usage.loading && !usage.data} />
      {usage.data && (
        <>
          <p data-testid="usage-summary">
            <span class={`badge status-${usage.data.status}`}>{usage.data.status}</span>{' '}
            <strong>{numberText(usage.data.total.evaluations)}</strong> evaluations and <strong>{numberText(usage.data.total.called)}</strong> <code>$feature_flag_called</code> events;
            last used {usage.data.last_called_at ? ago(usage.data.last_called_at) : 'never'}. <span class="muted">{usage.data.status_reason}</span>
          </p>
          <UsageBars days={usage.data.results} />
        </>
      )}
    </div>
  );
}

interface ScheduledChange {
  id: number;
  payload: { operation: string; value: any };
  scheduled_at: string;
  executed_at: string | null;
  failure_reason: string | null;
  is_recurring: boolean;
  recurrence_interval: string | null;
  last_executed_at: string | null;
  created_by: { email: string } | null;
}

function describe(p: ScheduledChange['payload']): string {
  if (p.operation === 'update_status') return p.value ? 'Enable the flag' : 'Disable the flag';
  if (p.operation === 'add_release_condition') {
    const groups = (p.value?.groups ?? []) as { rollout_percentage?: number | null; properties?: unknown[] }[];
    return `Add ${groups.map((g) => `${g.rollout_percentage ?? 100}% of users${g.properties?.length ? ` matching ${g.properties.length} condition(s)` : ''}`).join(', ')}`;
  }
  return `Set variants to ${(p.value?.variants ?? []).map((v: { key: string; rollout_percentage: number }) => `${v.key} ${v.rollout_percentage}%`).join(', ')}`;
}

/** `datetime-local` value (local time) of an ISO instant, and back. */
const localInput = (iso: string): string => {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
};
const fromLocal = (value: string): string => new Date(value).toISOString();

export function FlagScheduleTab({ projectId, flagId }: { projectId: number; flagId: string }) {
  const url = `/api/projects/${projectId}/scheduled_changes/`;
  const list = useGet<Paginated<ScheduledChange>>(`${url}?model_name=FeatureFlag&record_id=${flagId}`);
  const [operation, setOperation] = useState('enable');
  const [rollout, setRollout] = useState('100');
  const [at, setAt] = useState(() => localInput(new Date(Date.now() + 3_600_000).toISOString()));
  const [interval, setInterval] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [moving, setMoving] = useState<Record<number, string>>({});
  const fail = (err: unknown) => setError(err instanceof ApiError && err.body?.attr ? `${err.body.attr}: ${err.message}` : (err as Error).message);

  const add = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const payload = operation === 'enable' ? { operation: 'update_status', value: true }
      : operation === 'disable' ? { operation: 'update_status', value: false }
      : { operation: 'add_release_condition', value: { groups: [{ properties: [], rollout_percentage: Number(rollout) }] } };
    try {
      await api.post(url, {
        record_id: flagId, model_name: 'FeatureFlag', payload, scheduled_at: fromLocal(at),
        ...(interval ? { is_recurring: true, recurrence_interval: interval } : {}),
      });
      list.reload();
    } catch (err) {
      fail(err);
    }
  };

  return (
    <div data-testid="flag-schedule">
      <form class="row" onSubmit={add} data-testid="schedule-form">
        <Field label="Change">
          <select aria-label="scheduled operation" value={operation} onChange={(e) => setOperation(e.currentTarget.value)}>
            <option value="enable">Enable the flag</option>
            <option value="disable">Disable the flag</option>
            <option value="rollout">Add a release condition</option>
          </select>
        </Field>
        {operation === 'rollout' && (
          <Field label="Roll out to (%)"><input type="number" min={0} max={100} aria-label="scheduled rollout" value={rollout} onInput={(e) => setRollout(e.currentTarget.value)} /></Field>
        )}
        <Field label="At"><input type="datetime-local" step={1} aria-label="scheduled at" required value={at} onInput={(e) => setAt(e.currentTarget.value)} /></Field>
        {operation !== 'rollout' && (
          <Field label="Repeat">
            <select aria-label="repeat" value={interval} onChange={(e) => setInterval(e.currentTarget.value)}>
              <option value="">Once</option>
              <option value="daily">Daily</option>
              <option value="weekly">Weekly</option>
              <option value="monthly">Monthly</option>
            </select>
          </Field>
        )}
        <button type="submit" class="primary">Schedule</button>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      <ErrorNote error={list.error} />
      {list.data && (
        <table class="list" data-testid="scheduled-changes">
          <thead><tr><th>Change</th><th>When</th><th>State</th><th /></tr></thead>
          <tbody>
            {list.data.results.map((c) => {
              const pending = c.executed_at === null && c.failure_reason === null;
              return (
                <tr key={c.id} data-scheduled={c.id} data-state={c.failure_reason ? 'failed' : pending ? 'pending' : 'applied'}>
                  <td>{describe(c.payload)}{c.is_recurring && ` (${c.recurrence_interval})`}</td>
                  <td>
                    {moving[c.id] !== undefined ? (
                      <input type="datetime-local" aria-label={`move ${c.id}`} value={moving[c.id]} onInput={(e) => setMoving({ ...moving, [c.id]: e.currentTarget.value })} />
                    ) : when(c.scheduled_at)}
                  </td>
                  <td>
                    {c.failure_reason ? <span class="error">Failed: {c.failure_reason}</span>
                      : pending ? (c.last_executed_at ? `Last ran ${when(c.last_executed_at)}` : 'Pending')
                      : `Applied ${when(c.executed_at)}`}
                  </td>
                  <td>
                    {pending && moving[c.id] === undefined && <button type="button" onClick={() => setMoving({ ...moving, [c.id]: localInput(c.scheduled_at) })}>Edit time</button>}
                    {pending && moving[c.id] !== undefined && (
                      <button type="button" onClick={async () => {
                        try {
                          await api.patch(`${url}${c.id}/`, { scheduled_at: fromLocal(moving[c.id]!) });
                          setMoving(({ [c.id]: _, ...rest }) => rest);
                          list.reload();
                        } catch (err) {
                          fail(err);
                        }
                      }}>Save time</button>
                    )}
                    {pending && (
                      <button type="button" class="ghost danger" onClick={async () => {
                        if (!confirm('Cancel this scheduled change?')) return;
                        try {
                          await api.del(`${url}${c.id}/`);
                          list.reload();
                        } catch (err) {
                          fail(err);
                        }
                      }}>Cancel</button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {list.data && list.data.results.length === 0 && <p class="muted">No scheduled changes.</p>}
    </div>
  );
}

interface ActivityEntry {
  id: string;
  activity: string;
  created_at: string;
  user: { email: string | null; first_name?: string; is_system?: boolean } | null;
  detail: {
    version?: number;
    changes: { field: string; before: unknown; after: unknown }[] | null;
    trigger: { job_type: string; job_id: string | null; payload: any } | null;
  };
}

const show = (v: unknown): string => (v === null || v === undefined ? '—' : v === '' ? '(empty)' : typeof v === 'string' ? v : JSON.stringify(v));

/** The flag's history, newest first: who changed which field from what to what, and a revert to any version. */
export function FlagHistory({ base, flagId, currentVersion, onReverted }: { base: string; flagId: string; currentVersion: number; onReverted(): void }) {
  const activity = useGet<{ results: ActivityEntry[] }>(`${base}/${flagId}/activity/?limit=100`);
  const [error, setError] = useState<string | null>(null);
  return (
    <div data-testid="flag-activity">
      <ErrorNote error={activity.error} />
      {error && <p class="error" role="alert">{error}</p>}
      {activity.data && (
        <ul class="activity">
          {activity.data.results.map((a) => (
            <li key={a.id} data-version={a.detail.version ?? ''}>
              <strong>{a.user?.email ?? a.user?.first_name ?? 'someone'}</strong> {a.activity}
              {a.detail.version !== undefined && <> version {a.detail.version}</>} · {when(a.created_at)}
              {a.detail.trigger?.job_type === 'scheduled_change' && <span class="muted"> (scheduled change #{a.detail.trigger.job_id})</span>}
              {a.detail.trigger?.job_type === 'revert' && <span class="muted"> (revert to version {a.detail.trigger.payload?.version})</span>}
              {a.detail.version !== undefined && a.detail.version !== currentVersion && (
                <button type="button" class="ghost" data-testid={`revert-${a.detail.version}`} onClick={async () => {
                  if (!confirm(`Revert the flag to version ${a.detail.version}? Every SDK gets the change at once.`)) return;
                  setError(null);
                  try {
                    await api.post(`${base}/${flagId}/revert/`, { version: a.detail.version });
                    activity.reload();
                    onReverted();
                  } catch (err) {
                    setError((err as Error).message);
                  }
                }}>Revert to this version</button>
              )}
              {a.detail.changes && (
                <table class="changes">
                  <tbody>
                    {a.detail.changes.map((c, i) => (
                      <tr key={i} data-field={c.field}>
                        <td><code>{c.field}</code></td>
                        <td class="before"><pre>{show(c.before)}</pre></td>
                        <td>→</td>
                        <td class="after"><pre>{show(c.after)}</pre></td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
