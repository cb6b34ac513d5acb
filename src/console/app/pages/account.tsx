/**
 * The signed-in user's account: their password, and their personal API keys (create with a label and scopes, the
 * key shown once; list with last use; revoke), on /api/users/@me/ and /api/personal_api_keys/.
 */
import { useState } from 'preact/hooks';
import { isValidScope, SCOPE_OBJECTS } from '../../../domain/scopes';
import { api } from '../api';
import { ErrorNote, Field, Page } from '../components/ui';
import { ago, when } from '../lib/format';
import { useGet } from '../lib/hooks';
import { useSession } from '../session';

interface PersonalKey {
  id: string;
  label: string;
  mask_value: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  value?: string;
}

function PersonalKeys() {
  const keys = useGet<PersonalKey[]>('/api/personal_api_keys/');
  const [label, setLabel] = useState('');
  const [scopes, setScopes] = useState('*');
  const [created, setCreated] = useState<PersonalKey | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const list = scopes.split(/[\s,]+/).filter(Boolean);
    const bad = list.find((x) => !isValidScope(x));
    // The API's own rule, checked before the request so a typo is named at once.
    if (list.length === 0 || bad !== undefined) return setError(new Error(`Invalid scope: ${bad ?? '(none)'}. Use * or <object>:read|write.`));
    try {
      setCreated(await api.post<PersonalKey>('/api/personal_api_keys/', { label, scopes: list }));
      setLabel('');
      keys.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  const revoke = async (k: PersonalKey) => {
    if (!confirm(`Revoke the key "${k.label}" (${k.mask_value})? Clients using it stop working at once.`)) return;
    try {
      await api.del(`/api/personal_api_keys/${k.id}/`);
      if (created?.id === k.id) setCreated(null);
      keys.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <section class="card" data-testid="personal-keys">
      <h2>Personal API keys</h2>
      <p class="muted">For the private API (<code>Authorization: Bearer phx_…</code>) and local evaluation of flags.</p>
      <table class="list" data-testid="key-list">
        <thead><tr><th>Label</th><th>Key</th><th>Scopes</th><th>Created</th><th>Last used</th><th /></tr></thead>
        <tbody>
          {(keys.data ?? []).map((k) => (
            <tr key={k.id}>
              <td>{k.label}</td><td><code>{k.mask_value}</code></td><td>{k.scopes.join(', ')}</td>
              <td>{when(k.created_at)}</td><td>{k.last_used_at ? ago(k.last_used_at) : 'never'}</td>
              <td><button type="button" onClick={() => revoke(k)} aria-label={`revoke ${k.label}`}>Revoke</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      {created?.value && (
        <p class="ok" role="status" data-testid="new-key">
          New key <strong>{created.label}</strong>: <code>{created.value}</code>. Copy it now: it is not shown again.
        </p>
      )}
      <form class="form" onSubmit={create}>
        <Field label="Label"><input name="key_label" required maxLength={40} value={label} onInput={(e) => setLabel(e.currentTarget.value)} /></Field>
        <Field label="Scopes" hint={`* (everything), or a list such as feature_flag:read, person:write. Objects: ${SCOPE_OBJECTS.join(', ')}.`}>
          <input name="key_scopes" value={scopes} onInput={(e) => setScopes(e.currentTarget.value)} />
        </Field>
        <ErrorNote error={error ?? keys.error} />
        <div class="actions"><button type="submit" class="primary">Create key</button></div>
      </form>
    </section>
  );
}

export function AccountPage() {
  const { me } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [done, setDone] = useState(false);
  return (
    <Page title="Account" testId="account-page">
      <p>Signed in as <strong>{me.email}</strong> ({me.organization.name}).</p>
      <form class="card narrow" onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        setDone(false);
        try {
          await api.patch('/api/users/@me/', { current_password: current, password: next });
          setDone(true);
          setCurrent('');
          setNext('');
        } catch (err) {
          setError(err as Error);
        }
      }}>
        <h2>Change password</h2>
        <Field label="Current password"><input type="password" autoComplete="current-password" value={current} onInput={(e) => setCurrent(e.currentTarget.value)} /></Field>
        <Field label="New password" hint="At least 8 characters. Your other sessions are signed out."><input type="password" autoComplete="new-password" value={next} onInput={(e) => setNext(e.currentTarget.value)} /></Field>
        <ErrorNote error={error} />
        {done && <p class="ok" role="status">Password changed.</p>}
        <button type="submit">Change password</button>
      </form>
      <PersonalKeys />
    </Page>
  );
}
