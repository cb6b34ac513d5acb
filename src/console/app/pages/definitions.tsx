/** Event definitions: volume over 30 days and last seen; edit description, tags and verified in place. */
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, pathOf, qs, type Paginated } from '../api';
import { ErrorNote, Loading, Page, Pager } from '../components/ui';
import { ago } from '../lib/format';
import { useGet, useQueryParam } from '../lib/hooks';

interface Definition {
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  verified: boolean;
  volume_30_day: number | null;
  last_seen_at: string | null;
}

export function DefinitionsPage({ projectId }: { projectId: number }) {
  const [search, setSearch] = useQueryParam('search');
  const [path, setPath] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const list = useGet<Paginated<Definition>>(path ?? `/api/projects/${projectId}/event_definitions/${qs({ search, limit: 100 })}`);
  const save = async (id: string, body: Partial<Definition>) => {
    setError(null);
    try {
      await api.patch(`/api/projects/${projectId}/event_definitions/${id}/`, body);
      setEditing(null);
      list.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <Page title="Event definitions" testId="definitions-page">
      <div class="toolbar">
        <input type="search" aria-label="search events" placeholder="Search events" value={search} onChange={(e) => { setPath(null); setSearch(e.currentTarget.value.trim()); }} />
      </div>
      <ErrorNote error={list.error ?? error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <table class="list" data-testid="definition-list">
            <thead><tr><th>Event</th><th>Description</th><th>Tags</th><th>Verified</th><th>30-day volume</th><th>Last seen</th><th></th></tr></thead>
            <tbody>
              {list.data.results.map((d) => editing === d.id ? <EditRow key={d.id} d={d} onSave={(b) => save(d.id, b)} onCancel={() => setEditing(null)} /> : (
                <tr key={d.id}>
                  <td><Link href={`/project/${projectId}/events?event=${encodeURIComponent(d.name)}`}><code>{d.name}</code></Link></td>
                  <td>{d.description}</td>
                  <td>{d.tags.map((t) => <span class="chip" key={t}>{t}</span>)}</td>
                  <td>{d.verified ? '✓' : ''}</td>
                  <td>{d.volume_30_day ?? '—'}</td>
                  <td>{ago(d.last_seen_at)}</td>
                  <td><button class="ghost" onClick={() => setEditing(d.id)}>Edit</button></td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager next={list.data.next} previous={list.data.previous} onGo={(url) => setPath(pathOf(url))} />
        </>
      )}
    </Page>
  );
}

function EditRow(props: { d: Definition; onSave(body: Partial<Definition>): void; onCancel(): void }) {
  const [description, setDescription] = useState(props.d.description ?? '');
  const [tags, setTags] = useState(props.d.tags.join(', '));
  const [verified, setVerified] = useState(props.d.verified);
  return (
    <tr class="editing">
      <td><code>{props.d.name}</code></td>
      <td><input aria-label="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} /></td>
      <td><input aria-label="tags" value={tags} onInput={(e) => setTags(e.currentTarget.value)} placeholder="comma, separated" /></td>
      <td><input type="checkbox" aria-label="verified" checked={verified} onChange={(e) => setVerified(e.currentTarget.checked)} /></td>
      <td colSpan={2} />
      <td>
        <button onClick={() => props.onSave({ description, tags: tags.split(',').map((t) => t.trim()).filter(Boolean), verified })}>Save</button>
        <button class="ghost" onClick={props.onCancel}>Cancel</button>
      </td>
    </tr>
  );
}
