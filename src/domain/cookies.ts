/**
 * The console's session cookie: parsing the `Cookie` header and writing `Set-Cookie`. The cookie is HttpOnly (page
 * scripts never see the session token), SameSite=Lax (other sites' requests do not carry it, except top-level
 * navigations, which only ever GET), Path=/ (the API and the console share it), Secure over https.
 */
export const SESSION_COOKIE = 'quill_session';
/** Two weeks, Django's default session age (PostHog's too). */
export const SESSION_MAX_AGE_SECONDS = 14 * 24 * 3600;
/** The header a cookie-authenticated state-changing request must carry (Django's name). */
export const CSRF_HEADER = 'x-csrftoken';

/** The value of cookie `name` in a `Cookie` header, or null. */
export function cookieValue(header: string, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${SESSION_MAX_AGE_SECONDS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** Methods that change nothing: a cookie-authenticated request needs no CSRF token for them. */
export const isSafeMethod = (method: string): boolean => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
