import { useEffect, useState } from 'preact/hooks';
import { useSaveInsight } from '../lib/use-insight';
import { ErrorNote } from './ui';

/** The name field and save button under every insight. */
export function SaveInsight(props: { projectId: number; insightId: number | null; initialName: string; filters: Record<string, unknown> }) {
  const [name, setName] = useState(props.initialName);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const save = useSaveInsight(props.projectId, props.insightId);
  useEffect(() => setName(props.initialName), [props.initialName]);
  return (
    <form class="row save-insight" onSubmit={async (e) => {
      e.preventDefault();
      setError(null);
      try {
        setNote(await save(name, props.filters));
      } catch (err) {
        setError(err as Error);
      }
    }}>
      <input aria-label="insight name" placeholder="Insight name" required value={name} onInput={(e) => { setNote(null); setName(e.currentTarget.value); }} />
      <button type="submit" class="primary">{props.insightId !== null ? 'Save' : 'Save insight'}</button>
      {note && <span class="ok" role="status">{note}</span>}
      <ErrorNote error={error} />
    </form>
  );
}

/** The date range choices every insight offers (the stored value is kept even when it is not one of them). */
export function DateFrom(props: { value: string; onChange(v: string): void }) {
  const choices = [['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-14d', 'Last 14 days'], ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days'], ['mStart', 'This month'], ['-1y', 'Last year'], ['all', 'All time']];
  if (!choices.some(([v]) => v === props.value)) choices.push([props.value, props.value]);
  return (
    <select aria-label="date from" value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
      {choices.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
    </select>
  );
}
