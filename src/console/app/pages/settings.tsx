/**
 * Project settings: the project API key to copy (what SDKs and `/flags/` take) and PostHog's HTML snippet filled in
 * with it and this server's origin, the name, time zone, event retention, test-account filters and path cleaning
 * rules (PATCH /api/projects/:id/), posthog-js's modules, and the organization's members and roles, read from their
 * APIs.
 */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { htmlSnippet } from '../../../domain/html-snippet';
import { api, type Paginated } from '../api';
import { ErrorNote, Field, Loading, Page } from '../components/ui';
import { SdkModules, type SdkModuleSettings } from '../components/sdk-modules';
import { useGet } from '../lib/hooks';
import { RecordingSettings, type RecordingFields } from './recording-settings';

interface Project extends SdkModuleSettings, RecordingFields {
  id: number;
  name: string;
  api_token: string;
  timezone: string;
  event_retention_days: number | null;
  test_account_filters: unknown[];
  path_cleaning_filters: unknown[];
}

interface Member {
  id: string;
  user: { email: string; first_name: string };
  level: number;
}

interface Role {
  id: string;
  name: string;
  feature_flags_access_level: number;
}

const LEVELS: Record<number, string> = { 1: 'member', 8: 'admin', 15: 'owner' };

/** posthog-js's public methods, from the package this server serves (src/console/build.ts defines it). */
declare const __POSTHOG_SNIPPET_METHODS__: readonly string[];

/**
 * Copies `text`, and says so with `done`; without a clipboard (an insecure origin) selects the field `selector`
 * so the user copies it by hand.
 */
async function copyText(text: string, selector: string, done: () => void): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    done();
  } catch {
    document.querySelector<HTMLInputElement | HTMLTextAreaElement>(selector)?.select();
  }
}

function timeZones(): string[] {
  const withUtc = (list: string[]) => (list.includes('UTC') ? list : ['UTC', ...list]);
  try {
    return withUtc((Intl as unknown as { supportedValuesOf(kind: string): string[] }).supportedValuesOf('timeZone'));
  } catch {
    return ['UTC'];
  }
}

/** The JSON text of a list, and back (null when it does not parse as a list). */
const listText = (v: unknown[]) => JSON.stringify(v, null, 2);
function parseList(text: string): unknown[] | null {
  try {
    const v = JSON.parse(text.trim() === '' ? '[]' : text);
    return Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

export function SettingsPage({ projectId }: { projectId: number }) {
  const project = useGet<Project>(`/api/projects/${projectId}/`);
  const members = useGet<Paginated<Member>>('/api/organizations/@current/members/');
  const roles = useGet<Paginated<Role>>('/api/organizations/@current/roles/');
  const p = project.data;
  const [form, setForm] = useState({ name: '', timezone: 'UTC', retention: '', testAccounts: '[]', pathCleaning: '[]' });
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  const [copied, setCopied] = useState(false);
  const [snippetCopied, setSnippetCopied] = useState(false);
  useEffect(() => {
    if (!p) return;
    setForm({
      name: p.name, timezone: p.timezone, retention: p.event_retention_days === null ? '' : String(p.event_retention_days),
      testAccounts: listText(p.test_account_filters), pathCleaning: listText(p.path_cleaning_filters),
    });
  }, [p]);
  const set = (field: keyof typeof form) => (e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value });
  // The console is served by Quill itself, so its origin is the api_host browsers reach Quill at.
  const snippet = p ? htmlSnippet({ apiHost: location.origin, token: p.api_token, methods: __POSTHOG_SNIPPET_METHODS__ }) : '';
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    const testAccounts = parseList(form.testAccounts);
    const pathCleaning = parseList(form.pathCleaning);
    if (!testAccounts) return setError(new Error('Test-account filters must be a JSON list of property filters.'));
    if (!pathCleaning) return setError(new Error('Path cleaning rules must be a JSON list of {regex, alias}.'));
    try {
      await api.patch(`/api/projects/${projectId}/`, {
        name: form.name, timezone: form.timezone, event_retention_days: form.retention.trim() === '' ? null : Number(form.retention),
        test_account_filters: testAccounts, path_cleaning_filters: pathCleaning,
      });
      setSaved(true);
      project.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <Page title="Project settings" testId="settings-page">
      <ErrorNote error={project.error} />
      <Loading when={project.loading && !p} />
      {p && (
        <>
          <section class="card">
            <h2>Project API key</h2>
            <p class="muted">What SDKs, <code>/capture/</code> and <code>/flags/</code> take. It is public: it only sends events and evaluates flags.</p>
            <div class="copy-row">
              <input name="project_api_key" readOnly value={p.api_token} onFocus={(e) => e.currentTarget.select()} />
              <button type="button" onClick={() => copyText(p.api_token, 'input[name=project_api_key]', () => setCopied(true))}>{copied ? 'Copied' : 'Copy'}</button>
            </div>
            <p class="muted">Project id {p.id}. Personal API keys for the private API are on your <Link href="/account">account page</Link>.</p>
          </section>
          <section class="card" data-testid="html-snippet">
            <h2>HTML snippet</h2>
            <p class="muted">PostHog's snippet for this project: paste it into the <code>&lt;head&gt;</code> of your pages. It loads posthog-js from this server (<code>/static/array.js</code>) and sends events here.</p>
            <textarea name="html_snippet" readOnly rows={9} value={snippet} onFocus={(e) => e.currentTarget.select()} />
            <div class="actions">
              <button type="button" onClick={() => copyText(snippet, 'textarea[name=html_snippet]', () => setSnippetCopied(true))}>{snippetCopied ? 'Snippet copied' : 'Copy snippet'}</button>
            </div>
            <p class="muted">Testing with a headless browser (Playwright, Puppeteer)? posthog-js drops its events as a bot's unless <code>posthog.init</code> is given <code>opt_out_useragent_filter: true</code>.</p>
          </section>
          <form class="card form" onSubmit={save} data-testid="settings-form">
            <h2>Settings</h2>
            <Field label="Name"><input name="name" value={form.name} onInput={set('name')} /></Field>
            <Field label="Time zone" hint="Analyses bucket days and weeks in it.">
              <select name="timezone" value={form.timezone} onChange={set('timezone')}>
                {timeZones().map((z) => <option key={z} value={z}>{z}</option>)}
              </select>
            </Field>
            <Field label="Event retention (days)" hint="Events older than this are deleted; empty keeps them forever.">
              <input name="event_retention_days" type="number" min="1" max="36500" value={form.retention} onInput={set('retention')} />
            </Field>
            <Field label="Test-account filters" hint='Property filters that "filter out test accounts" applies, e.g. [{"key": "email", "operator": "not_icontains", "value": "@example.com", "type": "person"}]'>
              <textarea name="test_account_filters" rows={4} value={form.testAccounts} onInput={set('testAccounts')} />
            </Field>
            <Field label="Path cleaning rules" hint='Applied to URLs in paths, e.g. [{"regex": "/user/\\d+", "alias": "/user/:id"}]'>
              <textarea name="path_cleaning_filters" rows={4} value={form.pathCleaning} onInput={set('pathCleaning')} />
            </Field>
            <ErrorNote error={error} />
            {saved && <p class="ok" role="status">Saved.</p>}
            <div class="actions"><button type="submit" class="primary">Save</button></div>
          </form>
          <SdkModules projectId={projectId} project={p} onSaved={project.reload} />
          <RecordingSettings projectId={projectId} project={p} onSaved={project.reload} />
          <section class="card">
            <h2>Members</h2>
            <ErrorNote error={members.error} />
            <table class="list" data-testid="member-list">
              <thead><tr><th>Name</th><th>E-mail</th><th>Level</th></tr></thead>
              <tbody>
                {(members.data?.results ?? []).map((m) => (
                  <tr key={m.id}><td>{m.user.first_name}</td><td>{m.user.email}</td><td>{LEVELS[m.level] ?? m.level}</td></tr>
                ))}
              </tbody>
            </table>
            <h2>Roles</h2>
            <ErrorNote error={roles.error} />
            {roles.data && roles.data.results.length === 0 && <p class="muted">No roles. Roles narrow who may change flags (the API's organization roles).</p>}
            {roles.data && roles.data.results.length > 0 && (
              <table class="list">
                <thead><tr><th>Role</th><th>Flags</th></tr></thead>
                <tbody>
                  {roles.data.results.map((r) => <tr key={r.id}><td>{r.name}</td><td>{r.feature_flags_access_level >= 37 ? 'can always edit' : 'can only view'}</td></tr>)}
                </tbody>
              </table>
            )}
          </section>
        </>
      )}
    </Page>
  );
}
