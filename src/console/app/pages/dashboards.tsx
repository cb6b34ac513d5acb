/** The project's dashboards: create one (name, description), rename, delete (soft, as the API does, after asking). */
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type Paginated } from '../api';
import type { DashboardSummary } from '../components/dashboard-picker';
import { ErrorNote, Loading, Page } from '../components/ui';
import { useGet } from '../lib/hooks';

export function DashboardsPage({ projectId }: { projectId: number }) {
  const base = `/api/projects/${projectId}/dashboards/`;
  const list = useGet<Paginated<DashboardSummary>>(`${base}?limit=200`);
  const [, navigate] = useLocation();
  const [draft, setDraft] = useState({ name: '', description: '' });
  const [editing, setEditing] = useState<{ id: number; name: string; description: string } | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <Page title="Dashboards" testId="dashboards-page">
      <form class="row card" data-testid="new-dashboard" onSubmit={(e) => {
        e.preventDefault();
        act(async () => {
          const created = await api.post<{ id: number }>(base, draft);
          navigate(`/project/${projectId}/dashboard/${created.id}`);
        });
      }}>
        <input aria-label="new dashboard name" placeholder="Name" required value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        <input aria-label="new dashboard description" placeholder="Description (optional)" value={draft.description} onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })} />
        <button type="submit" class="primary">New dashboard</button>
      </form>
      <ErrorNote error={error ?? list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (list.data.results.length === 0 ? <p class="muted">No dashboards yet.</p> : (
        <table class="list" data-testid="dashboard-list">
          <thead><tr><th>Name</th><th>Description</th><th></th></tr></thead>
          <tbody>
            {list.data.results.map((d) => (editing?.id === d.id ? (
              <tr key={d.id}>
                <td colSpan={3}>
                  <form class="inline" onSubmit={(e) => {
                    e.preventDefault();
                    act(async () => {
                      await api.patch(`${base}${d.id}/`, { name: editing.name, description: editing.description });
                      setEditing(null);
                      list.reload();
                    });
                  }}>
                    <input aria-label="dashboard name" required value={editing.name} onInput={(e) => setEditing({ ...editing, name: e.currentTarget.value })} />
                    <input aria-label="dashboard description" value={editing.description} onInput={(e) => setEditing({ ...editing, description: e.currentTarget.value })} />
                    <button type="submit" class="primary">Save</button>
                    <button type="button" class="ghost" onClick={() => setEditing(null)}>Cancel</button>
                  </form>
                </td>
              </tr>
            ) : (
              <tr key={d.id} data-testid="dashboard-row">
                <td><Link href={`/project/${projectId}/dashboard/${d.id}`}>{d.name || `Dashboard ${d.id}`}</Link>{d.pinned && <span class="badge">pinned</span>}</td>
                <td class="muted">{d.description}</td>
                <td class="row-actions">
                  <button class="ghost" onClick={() => setEditing({ id: d.id, name: d.name, description: d.description })}>Rename</button>
                  <button class="ghost danger" onClick={() => {
                    if (!confirm(`Delete the dashboard "${d.name}"? Its insights stay saved.`)) return;
                    act(async () => {
                      await api.patch(`${base}${d.id}/`, { deleted: true });
                      list.reload();
                    });
                  }}>Delete</button>
                </td>
              </tr>
            )))}
          </tbody>
        </table>
      ))}
    </Page>
  );
}
