/**
 * The console's only door to Quill: same-origin fetches to the private API, authenticated by the session cookie
 * (HttpOnly, so this code never sees it). State-changing requests echo the session's CSRF token, which the console
 * holds in memory (from the sign-in answer or `/api/users/@me/`). A 401 means the session is gone: listeners
 * (the app shell) return to the sign-in page.
 */
export class ApiError extends Error {
  constructor(readonly status: number, readonly body: { type?: string; code?: string; detail?: string; attr?: string | null } | null) {
    super(body?.detail ?? `HTTP ${status}`);
  }
}

let csrfToken: string | null = null;
const signedOutListeners = new Set<() => void>();

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export async function request<T = any>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrftoken'] = csrfToken;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', signal });
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { detail: text };
  }
  if (!res.ok) {
    if (res.status === 401 && !path.startsWith('/api/login')) for (const l of signedOutListeners) l();
    throw new ApiError(res.status, parsed);
  }
  return parsed as T;
}

export const api = {
  get: <T = any>(path: string, signal?: AbortSignal) => request<T>('GET', path, undefined, signal),
  post: <T = any>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  patch: <T = any>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: <T = any>(path: string) => request<T>('DELETE', path),
};

/** `?a=1&b=…` from an object, leaving out empty values. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}

/** The path part of an absolute `next` URL from a paginated answer (same origin). */
export function pathOf(url: string): string {
  const u = new URL(url, location.origin);
  return u.pathname + u.search;
}

export interface Paginated<T> {
  count?: number;
  next: string | null;
  previous?: string | null;
  results: T[];
}

interface QueryStatus {
  id: string;
  complete: boolean;
  error: boolean;
  error_message: string | null;
  cancelled?: boolean;
  results: unknown;
}

/** How often an async query's status is asked for while it runs. */
const POLL_MS = 200;

/**
 * A query run as PostHog's async queries are (`refresh: "force_async"`): the node answers 202 with a status id
 * (handed to `started`, so the caller can `DELETE` it to cancel), and the status is polled until complete. Aborting
 * `signal` stops polling; an error of the query is thrown with the node's message.
 */
export async function runAsyncQuery<T>(projectId: number, query: object, signal: AbortSignal, started: (id: string) => void): Promise<T> {
  const base = `/api/projects/${projectId}/query/`;
  const first = await request<T & { query_status?: QueryStatus }>('POST', base, { query, refresh: 'force_async' }, signal);
  if (!first.query_status) return first;
  const id = first.query_status.id;
  started(id);
  for (;;) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, POLL_MS);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new DOMException('aborted', 'AbortError'));
      }, { once: true });
    });
    const { query_status: s } = await request<{ query_status: QueryStatus }>('GET', `${base}${id}/`, undefined, signal);
    if (!s.complete) continue;
    if (s.cancelled) throw new Error('Cancelled.');
    if (s.error) throw new ApiError(400, { detail: s.error_message ?? 'The query failed.' });
    return s.results as T;
  }
}
