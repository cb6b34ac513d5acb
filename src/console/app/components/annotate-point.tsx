/**
 * Annotating the day of a clicked point: a note stored as PostHog's project annotation on that day (noon in the
 * project's time zone), so every chart of the project draws it there.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { dateMarkerOf, forgetAnnotations } from '../lib/annotations';
import { ErrorNote } from './ui';

export function AnnotatePoint(props: { projectId: number; day: string; timeZone: string; onAdded(): void }) {
  const [content, setContent] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [added, setAdded] = useState<string | null>(null);
  return (
    <form class="row tight annotate-point" data-testid="annotate-point" onSubmit={async (e) => {
      e.preventDefault();
      setError(null);
      try {
        await api.post(`/api/projects/${props.projectId}/annotations/`, { content: content.trim(), date_marker: dateMarkerOf(props.day, props.timeZone), scope: 'project' });
        forgetAnnotations(props.projectId);
        setAdded(content.trim());
        setContent('');
        props.onAdded();
      } catch (err) {
        setError(err as Error);
      }
    }}>
      <input aria-label="annotation" placeholder={`Annotate ${props.day.slice(0, 10)}…`} required maxLength={400} value={content} onInput={(e) => setContent(e.currentTarget.value)} />
      <button type="submit">Add annotation</button>
      {added && <span class="ok" role="status">Added “{added}”.</span>}
      <ErrorNote error={error} />
    </form>
  );
}
