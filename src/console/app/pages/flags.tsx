/** Feature flags: search, the stale filter (PostHog's `active=STALE`), status and last use, active toggle, link to each flag's form. */
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, pathOf, qs, type Paginated } from '../api';
import { ErrorNote, Loading, Page, Pager } from '../components/ui';
import { ago, when } from '../lib/format';
import { useGet, useQueryParam } from '../lib/hooks';

export interface Flag {
  id: number;
  key: string;
  name: string;
  active: boolean;
  filters: Record<string, any>;
  created_at: string;
  updated_at?: string;
  ensure_experience_continuity?: boolean;
  version?: number;
  last_called_at?: string | null;
  status?: string;
  status_reason?: string;
}

export function FlagsPage({ projectId }: { projectId: number }) {
  const [search, setSearch] = useQueryParam('search');
  // `STALE`: PostHog's filter for the flags ready for clean-up (fully rolled out, or unused for 30 days).
  const [active, setActive] = useQueryParam('active');
  const [path, setPath] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [toggled, setToggled] = useState<Record<number, boolean>>({});
  const list = useGet<Paginated<Flag>>(path ?? `/api/projects/${projectId}/feature_flags/${qs({ search, active, limit: 100 })}`);
  return (
    <Page title="Feature flags" testId="flags-page" actions={<Link class="button" href={`/project/${projectId}/flags/new`}>New flag</Link>}>
      <div class="toolbar">
        <input type="search" aria-label="search flags" placeholder="Search by key or name" value={search} onChange={(e) => { setPath(null); setSearch(e.currentTarget.value.trim()); }} />
        <select aria-label="flag status filter" value={active} onChange={(e) => { setPath(null); setActive(e.currentTarget.value); }}>
          <option value="">All flags</option>
          <option value="true">Enabled</option>
          <option value="false">Disabled</option>
          <option value="STALE">Stale (ready for clean-up)</option>
        </select>
      </div>
      <ErrorNote error={list.error ?? error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <table class="list" data-testid="flag-list">
            <thead><tr><th>Key</th><th>Name</th><th>Release</th><th>Status</th><th>Last used</th><th>Updated</th><th>Active</th></tr></thead>
            <tbody>
              {list.data.results.map((f) => (
                <tr key={f.id} data-flag={f.key}>
                  <td><Link href={`/project/${projectId}/flags/${f.id}`}><code>{f.key}</code></Link></td>
                  <td>{f.name}</td>
                  <td>{summary(f)}</td>
                  <td>{f.status && <span class={`badge status-${f.status}`} title={f.status_reason}>{f.status}</span>}</td>
                  <td>{f.last_called_at ? ago(f.last_called_at) : 'never'}</td>
                  <td>{when(f.updated_at ?? f.created_at)}</td>
                  <td>
                    <label class="switch">
                      <input type="checkbox" aria-label={`active ${f.key}`} checked={toggled[f.id] ?? f.active} onChange={async (e) => {
                        const active = e.currentTarget.checked;
                        // A live flag changes for every user at once: ask first.
                        if (!confirm(`${active ? 'Enable' : 'Disable'} ${f.key}? Every SDK gets the change at once.`)) {
                          e.currentTarget.checked = !active;
                          return;
                        }
                        setError(null);
                        // Shown switched at once; undone if the API refuses.
                        setToggled((t) => ({ ...t, [f.id]: active }));
                        try {
                          await api.patch(`/api/projects/${projectId}/feature_flags/${f.id}/`, { active });
                        } catch (err) {
                          setError(err as Error);
                          setToggled(({ [f.id]: _, ...rest }) => rest);
                        }
                        list.reload();
                      }} />
                    </label>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.results.length === 0 && <p class="muted">No flags.</p>}
          <Pager next={list.data.next} previous={list.data.previous} onGo={(url) => setPath(pathOf(url))} />
        </>
      )}
    </Page>
  );
}

function summary(f: Flag): string {
  const groups = (f.filters?.groups ?? []) as { rollout_percentage?: number | null; properties?: unknown[] }[];
  const variants = f.filters?.multivariate?.variants?.length;
  const who = f.filters?.aggregation_group_type_index != null ? 'groups' : 'users';
  const one = (g: { rollout_percentage?: number | null; properties?: unknown[] }) => {
    const n = (g.properties ?? []).length;
    return `${g.rollout_percentage ?? 100}% of ${n === 0 ? who : `${who} matching ${n} condition${n === 1 ? '' : 's'}`}`;
  };
  const release = groups.length === 0 ? 'no release conditions' : groups.length === 1 ? one(groups[0]!) : `${groups.length} condition sets`;
  return variants ? `${release}, ${variants} variants` : release;
}
