import { useState } from 'preact/hooks';
import { api, ApiError, setCsrfToken } from '../api';

export function LoginPage(props: { onSignedIn(): void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <div class="login">
      <form class="card" data-testid="login-form" onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          const answer = await api.post<{ csrf_token: string }>('/api/login', { email, password });
          setCsrfToken(answer.csrf_token);
          props.onSignedIn();
        } catch (err) {
          setError(err instanceof ApiError ? err.message : String(err));
        } finally {
          setBusy(false);
        }
      }}>
        <h1>Sign in to Quill</h1>
        <label class="field"><span>E-mail</span><input name="email" type="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
        <label class="field"><span>Password</span><input name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} /></label>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        <p class="muted small">The first user's password is printed when Quill first starts (or set with QUILL_ADMIN_PASSWORD).</p>
      </form>
    </div>
  );
}
