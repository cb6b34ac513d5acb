/**
 * A saved trends insight's alerts (PostHog's `/alerts/?insight=`): each with its rule, its state (Firing, Not
 * firing, Errored with the error, Snoozed), when it was last checked and the value it saw; check now, pause, delete,
 * and a form to add one that tells the signed-in user by e-mail and, optionally, a webhook.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, type Paginated } from '../api';
import { alertBody, EMPTY_FORM, ruleText, stateTone, type Alert, type AlertForm } from '../lib/alert-text';
import { ago } from '../lib/format';
import { useSession } from '../session';
import { ErrorNote } from './ui';

export function InsightAlerts({ projectId, insightId }: { projectId: number; insightId: number }) {
  const base = `/api/projects/${projectId}/alerts/`;
  const me = useSession().me;
  const [alerts, setAlerts] = useState<Alert[] | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [form, setForm] = useState<AlertForm>(EMPTY_FORM);
  const [problem, setProblem] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const load = () => api.get<Paginated<Alert>>(`${base}?insight=${insightId}`).then((r) => setAlerts(r.results), setError);
  useEffect(() => {
    load();
  }, [base, insightId]);
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      await load();
    } catch (err) {
      setError(err as Error);
    }
  };
  const field = <K extends keyof AlertForm>(k: K) => (v: AlertForm[K]) => setForm({ ...form, [k]: v });
  return (
    <section class="card" data-testid="insight-alerts">
      <div class="row"><h3>Alerts</h3><button type="button" onClick={() => setAdding(!adding)} data-testid="alert-add">{adding ? 'Cancel' : 'New alert'}</button></div>
      <ErrorNote error={error} />
      {alerts?.length === 0 && !adding && <p class="muted">No alert on this insight: add one to be told when its first series crosses a bound.</p>}
      {alerts && alerts.length > 0 && (
        <table class="list" data-testid="alert-list">
          <thead><tr><th>Alert</th><th>State</th><th>Checked</th><th>Value</th><th /></tr></thead>
          <tbody>
            {alerts.map((a) => {
              const last = a.checks[0];
              return (
                <tr key={a.id} data-alert={a.name} data-state={a.state}>
                  <td><strong>{a.name}</strong><div class="muted small">{ruleText(a)} Checked {a.calculation_interval}.</div></td>
                  <td>
                    <span class={`badge ${stateTone(a.state)}`} data-testid="alert-state">{a.enabled ? a.state : 'Paused'}</span>
                    {a.state === 'Errored' && last?.error != null && <div class="error small">{typeof last.error === 'string' ? last.error : JSON.stringify(last.error)}</div>}
                  </td>
                  <td title={a.last_checked_at ?? ''}>{ago(a.last_checked_at)}</td>
                  <td data-testid="alert-value">{a.last_value ?? '–'}</td>
                  <td class="row tight">
                    <button type="button" onClick={() => act(() => api.post(`${base}${a.id}/check/`))} data-testid="alert-check">Check now</button>
                    <button type="button" onClick={() => act(() => api.patch(`${base}${a.id}/`, { enabled: !a.enabled }))}>{a.enabled ? 'Pause' : 'Resume'}</button>
                    <button type="button" class="ghost danger" onClick={() => confirm(`Delete the alert "${a.name}"?`) && act(() => api.del(`${base}${a.id}/`))}>Delete</button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {adding && (
        <form class="grid-form" data-testid="alert-form" onSubmit={(e) => {
          e.preventDefault();
          const made = alertBody(form, insightId, me.id);
          if ('problem' in made) return setProblem(made.problem);
          setProblem(null);
          act(async () => {
            await api.post(base, made.body);
            setForm(EMPTY_FORM);
            setAdding(false);
          });
        }}>
          <label>Name <input aria-label="alert name" value={form.name} onInput={(e) => field('name')(e.currentTarget.value)} /></label>
          <label>When
            <select aria-label="alert condition" value={form.condition} onChange={(e) => field('condition')(e.currentTarget.value as AlertForm['condition'])}>
              <option value="absolute_value">the value</option>
              <option value="relative_increase">the increase from the interval before</option>
              <option value="relative_decrease">the decrease from the interval before</option>
            </select>
          </label>
          <label>is below <input aria-label="alert lower bound" inputMode="decimal" value={form.lower} onInput={(e) => field('lower')(e.currentTarget.value)} /></label>
          <label>or above <input aria-label="alert upper bound" inputMode="decimal" value={form.upper} onInput={(e) => field('upper')(e.currentTarget.value)} /></label>
          <label>as
            <select aria-label="alert threshold type" value={form.thresholdType} onChange={(e) => field('thresholdType')(e.currentTarget.value as AlertForm['thresholdType'])}>
              <option value="absolute">a number</option>
              <option value="percentage">a percentage</option>
            </select>
          </label>
          <label>Check
            <select aria-label="alert interval" value={form.interval} onChange={(e) => field('interval')(e.currentTarget.value as AlertForm['interval'])}>
              {(['hourly', 'daily', 'weekly', 'monthly'] as const).map((i) => <option key={i} value={i}>{i}</option>)}
            </select>
          </label>
          <label>Webhook <input aria-label="alert webhook" type="url" placeholder="https://hooks.slack.com/… (optional)" value={form.webhookUrl} onInput={(e) => field('webhookUrl')(e.currentTarget.value)} /></label>
          <label class="check"><input type="checkbox" checked={form.notifyMe} onChange={(e) => field('notifyMe')(e.currentTarget.checked)} /> E-mail me ({me.email})</label>
          {problem && <p class="error" role="alert">{problem}</p>}
          <button type="submit" class="primary">Save alert</button>
        </form>
      )}
    </section>
  );
}
