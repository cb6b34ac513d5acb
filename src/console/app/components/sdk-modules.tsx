/**
 * posthog-js's optional modules, switched on for every page of the project at once: the project's settings
 * (PostHog's fields, PATCH /api/projects/:id/), which Quill's remote config hands to posthog-js. A page's own
 * posthog.init options still win over them.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote } from './ui';

/** The switches shown, by PostHog field; autocapture is stored as its opt-out. */
const SWITCHES = [
  ['autocapture', 'Autocapture', 'clicks, changes and form submissions ($autocapture)'],
  ['heatmaps_opt_in', 'Heatmaps', 'click and mouse-move positions ($$heatmap)'],
  ['capture_dead_clicks', 'Dead clicks', 'clicks after which nothing happened ($dead_click)'],
  ['autocapture_web_vitals_opt_in', 'Web vitals', 'LCP, CLS, FCP and INP ($web_vitals)'],
  ['autocapture_exceptions_opt_in', 'Exception autocapture', 'uncaught errors and rejections ($exception)'],
  ['surveys_opt_in', 'Surveys', 'posthog-js loads its survey code; Quill has no surveys to show yet'],
] as const;
type Switch = (typeof SWITCHES)[number][0];
export type SdkModuleSettings = Partial<Record<Exclude<Switch, 'autocapture'> | 'autocapture_opt_out', boolean | null>>;

const stateOf = (p: SdkModuleSettings): Record<Switch, boolean> => ({
  autocapture: p.autocapture_opt_out !== true,
  heatmaps_opt_in: p.heatmaps_opt_in === true,
  capture_dead_clicks: p.capture_dead_clicks === true,
  autocapture_web_vitals_opt_in: p.autocapture_web_vitals_opt_in === true,
  autocapture_exceptions_opt_in: p.autocapture_exceptions_opt_in === true,
  surveys_opt_in: p.surveys_opt_in === true,
});

export function SdkModules(props: { projectId: number; project: SdkModuleSettings; onSaved: () => void }) {
  const [on, setOn] = useState(stateOf(props.project));
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => setOn(stateOf(props.project)), [props.project]);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    const { autocapture, ...rest } = on;
    try {
      await api.patch(`/api/projects/${props.projectId}/`, { ...rest, autocapture_opt_out: !autocapture });
      setSaved(true);
      props.onSaved();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <form class="card form" onSubmit={save} data-testid="sdk-modules">
      <h2>posthog-js modules</h2>
      <p class="muted">What posthog-js captures on every page of this project, unless a page's <code>posthog.init</code> options say otherwise.</p>
      {SWITCHES.map(([name, label, what]) => (
        <label class="check" key={name}>
          <input type="checkbox" name={name} checked={on[name]} onChange={(ev) => setOn({ ...on, [name]: ev.currentTarget.checked })} /> {label}: <span class="muted">{what}</span>
        </label>
      ))}
      <ErrorNote error={error} />
      {saved && <p class="ok" role="status">Saved.</p>}
      <div class="actions"><button type="submit" class="primary">Save modules</button></div>
    </form>
  );
}
