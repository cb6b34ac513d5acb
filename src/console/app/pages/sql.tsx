/**
 * The SQL editor (PostHog's SQL insight): HogQL in a CodeMirror editor that completes tables, columns and the
 * project's property names, a schema browser, the answer as a table, a line or bar chart or a number, cancel, the
 * query history (kept in this browser), an error marked where it points, and saving as an insight (a
 * `DataVisualizationNode`, which dashboards show too). Queries run through `/query/` under the query budget, on
 * ClickHouse when the node answers from it.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { api, runAsyncQuery } from '../api';
import { SqlEditor } from '../components/sql-editor';
import { SqlAnswer } from '../components/sql-answer';
import { ErrorNote, Field, Page } from '../components/ui';
import { usePropertyDefinitions } from '../lib/property-definitions';
import { completionSchema, errorPosition, HOGQL_TABLES, pushHistory, SQL_DISPLAYS, sqlOfQuery, visualizationQuery, type SqlDisplay, type SqlResult } from '../lib/sql-insight';
import { useSavedInsight } from '../lib/use-insight';

const FIRST_QUERY = `SELECT event, count() AS events
FROM events
WHERE timestamp > now() - INTERVAL 7 DAY
GROUP BY event
ORDER BY events DESC
LIMIT 100`;

const historyKey = (projectId: number) => `quill.sql-history.${projectId}`;
function readHistory(projectId: number): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(historyKey(projectId)) ?? '[]');
    return Array.isArray(v) ? v.filter((q) => typeof q === 'string') : [];
  } catch {
    return [];
  }
}

export function SqlPage({ projectId, insightId = null }: { projectId: number; insightId?: number | null }) {
  const saved = useSavedInsight(projectId, insightId);
  const [query, setQuery] = useState(FIRST_QUERY);
  const [replacement, setReplacement] = useState<{ text: string; version: number } | null>(null);
  /** A text for the editor from outside it (history, saved insight, schema): the editor takes it once. */
  const replaceQuery = (text: string) => {
    setQuery(text);
    setReplacement((r) => ({ text, version: (r?.version ?? 0) + 1 }));
  };
  const [display, setDisplay] = useState<SqlDisplay>('ActionsTable');
  const [result, setResult] = useState<SqlResult | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [running, setRunning] = useState(false);
  const [history, setHistory] = useState<string[]>(() => readHistory(projectId));
  const [name, setName] = useState('');
  const [savedNote, setSavedNote] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  const [, navigate] = useLocation();
  const eventProps = usePropertyDefinitions(projectId, 'event');
  const personProps = usePropertyDefinitions(projectId, 'person');
  const schema = useMemo(() => completionSchema([...(eventProps.names ?? [])].sort(), [...(personProps.names ?? [])].sort()), [eventProps.names, personProps.names]);

  /** The node's id of the query running (an async query), so Cancel stops it there too. */
  const running_ = useRef<string | null>(null);
  const run = async (text = query) => {
    stop();
    const controller = new AbortController();
    abort.current = controller;
    setRunning(true);
    setError(null);
    setSavedNote(null);
    try {
      // Asked as PostHog's async query: 202 and an id to poll, which Cancel deletes (the node then stops the work).
      const answer = await runAsyncQuery<SqlResult>(projectId, { kind: 'HogQLQuery', query: text }, controller.signal, (id) => (running_.current = id));
      setResult({ columns: answer.columns ?? [], results: answer.results ?? [] });
      const next = pushHistory(history, text);
      setHistory(next);
      localStorage.setItem(historyKey(projectId), JSON.stringify(next));
    } catch (err) {
      if (!controller.signal.aborted) setError(err as Error);
    } finally {
      if (abort.current === controller) {
        abort.current = null;
        running_.current = null;
        setRunning(false);
      }
    }
  };
  /** Stops polling, and the query on the node when it has one. */
  const stop = () => {
    abort.current?.abort();
    abort.current = null;
    const id = running_.current;
    running_.current = null;
    if (id !== null) void api.del(`/api/projects/${projectId}/query/${id}/`).catch(() => undefined);
  };
  const cancel = () => {
    stop();
    setRunning(false);
    setError(new Error('Cancelled.'));
  };

  // A saved SQL insight opens with its query and display, and runs.
  useEffect(() => {
    const sqlInsight = sqlOfQuery(saved.data?.query);
    if (!saved.data || !sqlInsight) return;
    replaceQuery(sqlInsight.query);
    setDisplay(sqlInsight.display);
    setName(saved.data.name);
    void run(sqlInsight.query);
  }, [saved.data]);
  useEffect(() => () => stop(), []);

  const save = async (e: Event) => {
    e.preventDefault();
    try {
      const body = { name, query: visualizationQuery(query, display) };
      if (insightId !== null) {
        await api.patch(`/api/projects/${projectId}/insights/${insightId}/`, body);
        setSavedNote('Saved.');
      } else {
        const created = await api.post<{ id: number }>(`/api/projects/${projectId}/insights/`, body);
        navigate(`/project/${projectId}/insights/saved/${created.id}`);
      }
    } catch (err) {
      setError(err as Error);
    }
  };

  const insert = (text: string) => replaceQuery(`${query}${query.endsWith(' ') || query.endsWith('\n') || query === '' ? '' : ' '}${text}`);
  const at = error ? errorPosition(error.message) : null;
  return (
    <Page title={saved.data?.name || 'SQL'} testId="sql-page">
      <div class="sql-layout">
        <aside class="card sql-schema" data-testid="sql-schema">
          <h3>Tables</h3>
          {Object.entries(HOGQL_TABLES).map(([table, columns]) => (
            <details key={table} open={table === 'events'}>
              <summary><button type="button" class="link" onClick={() => insert(table)}>{table}</button></summary>
              <ul>{columns.map((c) => <li key={c}><button type="button" class="link" onClick={() => insert(c)}>{c}</button></li>)}</ul>
            </details>
          ))}
          {eventProps.names && eventProps.names.size > 0 && (
            <details>
              <summary>Event properties</summary>
              <ul>{[...eventProps.names].sort().map((p) => <li key={p}><button type="button" class="link" onClick={() => insert(`properties.${p}`)}>{p}</button></li>)}</ul>
            </details>
          )}
          {personProps.names && personProps.names.size > 0 && (
            <details>
              <summary>Person properties</summary>
              <ul>{[...personProps.names].sort().map((p) => <li key={p}><button type="button" class="link" onClick={() => insert(`person.properties.${p}`)}>{p}</button></li>)}</ul>
            </details>
          )}
        </aside>
        <div class="sql-main">
          <SqlEditor initial={FIRST_QUERY} replacement={replacement} onChange={setQuery} onRun={() => void run()} schema={schema} errorAt={at} />
          <div class="row">
            <button type="button" class="primary" onClick={() => void run()} disabled={running}>Run</button>
            {running && <button type="button" onClick={cancel}>Cancel</button>}
            <span class="muted small">Ctrl/⌘ + Enter runs the query.</span>
            <Field label="Show as">
              <select aria-label="display" value={display} onChange={(e) => setDisplay(e.currentTarget.value as SqlDisplay)}>
                {SQL_DISPLAYS.map(([d, label]) => <option key={d} value={d}>{label}</option>)}
              </select>
            </Field>
          </div>
          <ErrorNote error={error} />
          {at !== null && <p class="muted" data-testid="sql-error-position">Marked in the query at character {at}.</p>}
          {running && <p class="muted" data-testid="running">Running…</p>}
          {result && <SqlAnswer result={result} display={display} stale={running || error !== null} />}
          <form class="row" onSubmit={save} data-testid="sql-save">
            <input aria-label="insight name" placeholder="Insight name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
            <button type="submit">{insightId === null ? 'Save as insight' : 'Save'}</button>
            {savedNote && <span role="status">{savedNote}</span>}
          </form>
          {history.length > 0 && (
            <details data-testid="sql-history">
              <summary>History ({history.length})</summary>
              <ul>{history.map((h) => <li key={h}><button type="button" class="link" onClick={() => replaceQuery(h)}><code>{h.length > 120 ? `${h.slice(0, 120)}…` : h}</code></button></li>)}</ul>
            </details>
          )}
        </div>
      </div>
    </Page>
  );
}
