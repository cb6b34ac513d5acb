import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote, Field, Page } from '../components/ui';
import { useSession } from '../session';

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
    </Page>
  );
}
