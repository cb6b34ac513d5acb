/**
 * The project's session-recording settings on the Settings page: PostHog's team fields (src/domain/recordings/
 * settings.ts), saved with their own PATCH. posthog-js reads them from the remote config at its next page load.
 */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api } from '../api';
import { ErrorNote, Field } from '../components/ui';

export interface RecordingFields {
  session_recording_opt_in: boolean;
  session_recording_sample_rate: string | null;
  session_recording_minimum_duration_milliseconds: number | null;
  capture_console_log_opt_in: boolean;
  session_recording_masking_config: { maskAllInputs?: boolean } | null;
  recording_retention_days: number;
}

export function RecordingSettings({ projectId, project, onSaved }: { projectId: number; project: RecordingFields; onSaved(): void }) {
  const initial = () => ({
    on: project.session_recording_opt_in,
    rate: project.session_recording_sample_rate === null ? '' : String(Math.round(Number(project.session_recording_sample_rate) * 100)),
    minimum: project.session_recording_minimum_duration_milliseconds === null ? '' : String(project.session_recording_minimum_duration_milliseconds / 1000),
    console: project.capture_console_log_opt_in,
    maskInputs: project.session_recording_masking_config?.maskAllInputs !== false,
    retention: String(project.recording_retention_days),
  });
  const [form, setForm] = useState(initial);
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => setForm(initial()), [project]);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    try {
      await api.patch(`/api/projects/${projectId}/`, {
        session_recording_opt_in: form.on,
        session_recording_sample_rate: form.rate.trim() === '' ? null : (Number(form.rate) / 100).toFixed(2),
        session_recording_minimum_duration_milliseconds: form.minimum.trim() === '' ? null : Math.round(Number(form.minimum) * 1000),
        capture_console_log_opt_in: form.console,
        // Every input masked is posthog-js' default: null leaves it; false is an explicit choice.
        session_recording_masking_config: form.maskInputs ? null : { maskAllInputs: false },
        recording_retention_days: Number(form.retention),
      });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err as Error);
    }
  };
  const check = (field: 'on' | 'console' | 'maskInputs') => (e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).checked });
  const text = (field: 'rate' | 'minimum' | 'retention') => (e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value });
  return (
    <form class="card form" onSubmit={save} data-testid="recording-settings">
      <h2>Session recording</h2>
      <p class="muted">posthog-js records the sessions of your pages once this is on (at their next load); see them under <Link href={`/project/${projectId}/replay`}>Recordings</Link>.</p>
      <label><input type="checkbox" name="session_recording_opt_in" checked={form.on} onChange={check('on')} /> Record sessions</label>
      <Field label="Sample rate (%)" hint="The share of sessions recorded; empty records all of them.">
        <input name="session_recording_sample_rate" type="number" min="0" max="100" value={form.rate} onInput={text('rate')} />
      </Field>
      <Field label="Minimum duration (seconds)" hint="Shorter sessions are not sent (at most 30).">
        <input name="session_recording_minimum_duration_milliseconds" type="number" min="0" max="30" step="0.5" value={form.minimum} onInput={text('minimum')} />
      </Field>
      <label><input type="checkbox" name="capture_console_log_opt_in" checked={form.console} onChange={check('console')} /> Capture console logs</label>
      <label><input type="checkbox" name="mask_all_inputs" checked={form.maskInputs} onChange={check('maskInputs')} /> Mask every input (recommended)</label>
      <Field label="Keep recordings (days)">
        <input name="recording_retention_days" type="number" min="1" max="3650" value={form.retention} onInput={text('retention')} />
      </Field>
      <ErrorNote error={error} />
      {saved && <p class="ok" role="status">Saved.</p>}
      <div class="actions"><button type="submit" class="primary">Save recording settings</button></div>
    </form>
  );
}
