/**
 * "Share": a dashboard, an insight or the web analytics page made readable by anyone holding its link (PostHog's
 * `sharing` endpoints under `path`). The link can be turned off, replaced by a new one (the old one then opens
 * nothing), and protected by passwords, each shown once when it is made.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorNote } from './ui';

interface SharePassword {
  id: number;
  note: string;
  created_at: string;
  created_by_email: string;
}

interface Sharing {
  enabled: boolean;
  access_token: string | null;
  password_required: boolean;
  share_passwords: SharePassword[];
}

/** The address a link is opened at: PostHog's `/shared/<token>` on this server. */
export const shareUrl = (token: string): string => `${location.origin}/shared/${token}`;

export function ShareButton({ path, what }: { path: string; what: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" data-testid="share-button" onClick={() => setOpen(!open)} aria-expanded={open}>Share</button>
      {open && <SharePanel path={path} what={what} onClose={() => setOpen(false)} />}
    </>
  );
}

function SharePanel({ path, what, onClose }: { path: string; what: string; onClose(): void }) {
  const [sharing, setSharing] = useState<Sharing | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [made, setMade] = useState<string | null>(null);
  const [typed, setTyped] = useState('');
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    api.get<Sharing>(path).then(setSharing, setError);
  }, [path]);
  const act = async (fn: () => Promise<Sharing | void>) => {
    setError(null);
    try {
      const next = await fn();
      setSharing(next ?? (await api.get<Sharing>(path)));
    } catch (err) {
      setError(err as Error);
    }
  };
  const link = sharing?.enabled && sharing.access_token ? shareUrl(sharing.access_token) : null;
  return (
    <div class="card share-panel" role="dialog" aria-label={`Share ${what}`} data-testid="share-panel">
      <div class="row"><h3>Share {what}</h3><button type="button" class="ghost" aria-label="close" onClick={onClose}>×</button></div>
      <ErrorNote error={error} />
      {sharing && (
        <>
          <label class="check">
            <input type="checkbox" data-testid="share-enabled" checked={sharing.enabled}
              onChange={(e) => act(() => api.patch<Sharing>(path, { enabled: e.currentTarget.checked }))} />
            Anyone with the link can see {what} (read-only, without signing in)
          </label>
          {link && (
            <>
              <div class="row tight">
                <input readOnly class="grow" data-testid="share-link" value={link} onFocus={(e) => e.currentTarget.select()} />
                <button type="button" onClick={() => navigator.clipboard?.writeText(link).then(() => setCopied(true), () => undefined)}>{copied ? 'Copied' : 'Copy'}</button>
                <a class="button" href={link} target="_blank" rel="noopener">Open</a>
              </div>
              <p class="muted small">Answers on the shared page are at most a few minutes old (QUILL_SHARE_CACHE_S).</p>
              <button type="button" data-testid="share-refresh" onClick={() => {
                if (confirm('Make a new link? The current one will stop working for everyone who has it.')) act(() => api.post<Sharing>(`${path}refresh/`));
              }}>New link</button>
              <label class="check">
                <input type="checkbox" data-testid="share-password-required" checked={sharing.password_required}
                  onChange={(e) => act(() => api.patch<Sharing>(path, { password_required: e.currentTarget.checked }))} />
                Require a password
              </label>
            </>
          )}
          {link && sharing.password_required && (
            <div data-testid="share-passwords">
              {sharing.share_passwords.length === 0 && <p class="muted">No password yet: nobody can open the link until you add one.</p>}
              <ul class="plain">
                {sharing.share_passwords.map((p) => (
                  <li key={p.id} class="row tight">
                    <span>{p.note || 'Password'} <span class="muted small">· {p.created_by_email}</span></span>
                    <button type="button" class="ghost danger" aria-label={`delete password ${p.note || p.id}`}
                      onClick={() => act(async () => void (await api.del(`${path}passwords/${p.id}/`)))}>Delete</button>
                  </li>
                ))}
              </ul>
              <form class="row tight" onSubmit={(e) => {
                e.preventDefault();
                act(async () => {
                  const created = await api.post<{ password: string }>(`${path}passwords/`, typed ? { raw_password: typed } : {});
                  setMade(created.password);
                  setTyped('');
                });
              }}>
                <input type="text" aria-label="new password" placeholder="a password (empty: generate one)" minLength={8} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
                <button type="submit" data-testid="share-add-password">Add password</button>
              </form>
              {made && <p data-testid="share-new-password">New password, shown only now: <code>{made}</code></p>}
            </div>
          )}
        </>
      )}
    </div>
  );
}
