/**
 * Console sign-in: e-mail and password → a session (HttpOnly cookie) that the private API accepts like a key with
 * the full rights of its user (src/front/auth-cache.ts). Sessions live in the metadata environment, keyed by the
 * token's digest; the front checks them from its in-memory snapshot (`authChanged` refreshes it), so no request
 * touches the disk to authenticate. Wrong passwords are throttled by the front (src/domain/login-throttle.ts),
 * which counts this operation's `invalid_credentials` answers.
 */
import { randomBytes } from 'node:crypto';
import type { Session, User } from '../../domain/model.js';
import { clearedSessionCookie, sessionCookie, SESSION_MAX_AGE_SECONDS } from '../../domain/cookies.js';
import { hashPassword, passwordProblem, verifyPassword } from '../../domain/passwords.js';
import { keyDigest } from '../../domain/secrets.js';
import { Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { json } from '../reply.js';
import { userRef } from './accounts.js';
import { bodyOf, nowIso, principalOf, type OpHandler } from './types.js';

const secureRequest = (item: TaskItem): boolean => item.meta.url.startsWith('https:');

function userByEmail(meta: MetaStore, email: string): User | undefined {
  const wanted = email.trim().toLowerCase();
  for (const { value } of meta.users.getRange()) if (value.email.toLowerCase() === wanted) return value;
  return undefined;
}

/** Drops expired sessions (inside a write); run whenever a session is created, so the table stays small. */
function purgeExpired(meta: MetaStore, now: number): void {
  for (const { key, value } of meta.sessions.getRange()) if (value.expires_at <= now) meta.sessions.remove(key);
}

/** `POST /api/login {email, password}` (PostHog's path and body). */
export const login: OpHandler = async (item, rt) => {
  const body = bodyOf(item);
  if (typeof body.email !== 'string' || body.email.trim() === '') throw Errors.required('email');
  if (typeof body.password !== 'string' || body.password === '') throw Errors.required('password');
  rt.meta.env.resetReadTxn();
  const user = userByEmail(rt.meta, body.email);
  // An unknown e-mail still costs one derivation, so the answer does not tell which accounts exist.
  const ok = await verifyPassword(body.password, user?.password_hash);
  if (!user || !ok) throw Errors.invalidCredentials();

  const token = randomBytes(32).toString('base64url');
  const now = item.meta.now;
  const session: Session = {
    digest: keyDigest(token), user_id: user.id, csrf: randomBytes(24).toString('base64url'), created_at: nowIso(),
    expires_at: now + SESSION_MAX_AGE_SECONDS * 1000,
  };
  await rt.meta.write(() => {
    purgeExpired(rt.meta, now);
    rt.meta.sessions.put(session.digest, session);
  });
  return { ...json(200, { ...userRef(user), csrf_token: session.csrf }, { 'Set-Cookie': sessionCookie(token, secureRequest(item)) }), authChanged: true };
};

/** `POST /api/logout`: ends the session the cookie names (a key-authenticated call has none to end). */
export const logout: OpHandler = async (item, rt) => {
  const digest = principalOf(item).sessionDigest;
  if (digest) await rt.meta.write(() => rt.meta.sessions.remove(digest));
  return { ...json(200, { success: true }, { 'Set-Cookie': clearedSessionCookie(secureRequest(item)) }), authChanged: digest !== null };
};

/**
 * `PATCH /api/users/@me/ {current_password, password}` (PostHog's fields): the current password is required (also
 * for the first user's generated one); every other session of the user ends, the caller's own stays.
 */
export const changePassword: OpHandler = async (item, rt) => {
  const principal = principalOf(item);
  const body = bodyOf(item);
  if (body.password === undefined) throw Errors.required('password');
  const problem = passwordProblem(body.password);
  if (problem) throw Errors.validation('password', 'invalid_input', problem);
  if (typeof body.current_password !== 'string') throw Errors.required('current_password');
  rt.meta.env.resetReadTxn();
  const user = rt.meta.users.get(principal.userId);
  if (!user) throw Errors.notAuthenticated();
  if (!(await verifyPassword(body.current_password, user.password_hash))) {
    throw Errors.validation('current_password', 'invalid_input', 'Your current password is incorrect.');
  }
  const hash = await hashPassword(body.password as string);
  await rt.meta.write(() => {
    const fresh = rt.meta.users.get(user.id);
    if (!fresh) throw Errors.notAuthenticated();
    rt.meta.users.put(user.id, { ...fresh, password_hash: hash });
    for (const { key, value } of rt.meta.sessions.getRange()) {
      if (value.user_id === user.id && key !== principal.sessionDigest) rt.meta.sessions.remove(key);
    }
  });
  return { ...json(200, userRef(user)), authChanged: true };
};
