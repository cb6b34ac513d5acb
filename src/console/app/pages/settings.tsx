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
import { completeFilters, PropertyFilters, type PropertyFilter } from '../components/property-filters';
import { PropertyScope } from '../components/property-input';
import { ErrorNote, Field, Loading, Page } from '../components/ui';
import { SdkModules, type SdkModuleSettings } from '../components/sdk-modules';
import { cleanPath, pathRuleProblems, rulesToSave, type PathRule } from '../lib/path-cleaning';
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

export function SettingsPage({ projectId }: { projectId: number }) {
  const project = useGet<Project>(`/api/projects/${projectId}/`);
  const members = useGet<Paginated<Member>>('/api/organizations/@current/members/');
  const roles = useGet<Paginated<Role>>('/api/organizations/@current/roles/');
  const p = project.data;
  const [form, setForm] = useState({ name: '', timezone: 'UTC', retention: '' });
  const [testAccounts, setTestAccounts] = useState<PropertyFilter[]>([]);
  const [pathRules, setPathRules] = useState<PathRule[]>([]);
  const [samplePath, setSamplePath] = useState('/user/42/settings');
  const ruleProblems = pathRuleProblems(pathRules);
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  const [copied, setCopied] = useState(false);
  const [snippetCopied, setSnippetCopied] = useState(false);
  useEffect(() => {
    if (!p) return;
    setForm({ name: p.name, timezone: p.timezone, retention: p.event_retention_days === null ? '' : String(p.event_retention_days) });
    setTestAccounts(p.test_account_filters as PropertyFilter[]);
    setPathRules(p.path_cleaning_filters as PathRule[]);
  }, [p]);
  const set = (field: keyof typeof form) => (e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value });
  // The console is served by Quill itself, so its origin is the api_host browsers reach Quill at.
  const snippet = p ? htmlSnippet({ apiHost: location.origin, token: p.api_token, methods: __POSTHOG_SNIPPET_METHODS__ }) : '';
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    if (ruleProblems.size > 0) return setError(new Error('A path cleaning rule above needs fixing first.'));
    try {
      await api.patch(`/api/projects/${projectId}/`, {
        name: form.name, timezone: form.timezone, event_retention_days: form.retention.trim() === '' ? null : Number(form.retention),
        test_account_filters: completeFilters(testAccounts), path_cleaning_filters: rulesToSave(pathRules),
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
            <fieldset data-testid="test-account-filters">
              <legend>Test-account filters</legend>
              <p class="muted">What “filter out test accounts” leaves out of an analysis: events matching every filter here are kept, e.g. person property email does not contain @example.com.</p>
              <PropertyScope projectId={projectId}>
                <PropertyFilters value={testAccounts} onChange={setTestAccounts} types={['event', 'person']} />
              </PropertyScope>
            </fieldset>
            <fieldset data-testid="path-cleaning-rules">
              <legend>Path cleaning rules</legend>
              <p class="muted">Applied in order to the URLs of paths: each regular expression's matches are replaced by its alias.</p>
              {pathRules.map((r, i) => (
                <div class="row" key={i} data-testid="path-rule">
                  <input aria-label={`path rule pattern ${i + 1}`} placeholder="regular expression, e.g. /user/\d+" value={r.regex} aria-invalid={ruleProblems.has(i) ? 'true' : undefined}
                    onInput={(e) => setPathRules(pathRules.map((x, j) => (j === i ? { ...x, regex: e.currentTarget.value } : x)))} />
                  <span>→</span>
                  <input aria-label={`path rule alias ${i + 1}`} placeholder="alias, e.g. /user/:id" value={r.alias}
                    onInput={(e) => setPathRules(pathRules.map((x, j) => (j === i ? { ...x, alias: e.currentTarget.value } : x)))} />
                  <button type="button" class="ghost danger" aria-label={`remove path rule ${i + 1}`} onClick={() => setPathRules(pathRules.filter((_, j) => j !== i))}>×</button>
                  {ruleProblems.has(i) && <span class="error" data-testid="path-rule-error">{ruleProblems.get(i)}</span>}
                </div>
              ))}
              <button type="button" onClick={() => setPathRules([...pathRules, { regex: '', alias: '' }])}>Add rule</button>
              {pathRules.length > 0 && (
                <p class="row">
                  <label>Try a path <input aria-label="sample path" value={samplePath} onInput={(e) => setSamplePath(e.currentTarget.value)} /></label>
                  <span>→ <code data-testid="cleaned-path">{cleanPath(samplePath, pathRules)}</code></span>
                </p>
              )}
            </fieldset>
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
