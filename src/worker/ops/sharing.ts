/**
 * Share links: PostHog's `sharing` endpoints on a dashboard, a saved insight and (Quill's) the web analytics page —
 * `GET`/`PATCH …/sharing/` (`enabled`, `access_token`, `password_required`, `settings`), `POST …/sharing/refresh/`
 * (a new token: the old link opens nothing), `POST/DELETE …/sharing/passwords/` — and what a link opens, with no
 * credentials but the token in its path:
 *
 * - `GET /api/shared/:access_token`: the target as the shared page draws it (a dashboard's tiles or an insight
 *   with their results; for web analytics, the project's name and time zone);
 * - `POST /api/shared/:access_token/query/`: a shared web analytics page's own queries, and nothing else
 *   (src/domain/sharing.ts `sharedWebQueryProblem`);
 * - `POST /shared/:access_token` `{password}`: PostHog's unlock of a password-protected link, answering
 *   `{shareToken}` for `Authorization: Bearer` (throttled by the front like sign-in).
 *
 * A link reaches its one target in its one project and nothing else: no private route accepts its token, and what
 * it answers carries no user, key or other object. Answers come through src/worker/share-answers.ts.
 */
import type { Dashboard, Insight, SharePassword, ShareTarget, SharingConfiguration } from '../../domain/model.js';
import { insightOnDashboard } from '../../domain/analytics/dashboard-filters.js';
import { invalidInput } from '../../domain/analytics/errors.js';
import { hashPassword, passwordProblem, verifyPassword } from '../../domain/passwords.js';
import { randomAlnum } from '../../domain/secrets.js';
import {
  looksLikeAccessToken, newAccessToken, newSessionSecret, sharedWebQueryProblem, shareSessionToken, shareSessionValid, sharingJson, targetKey,
} from '../../domain/sharing.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { Reply, TaskItem } from '../../protocol/worker-messages.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { empty, json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { ShareAnswers, type ShareAnswer } from '../share-answers.js';
import { answering } from './insights.js';
import { answerQuery, runnableQuery } from './query.js';
import { queryOfInsight } from './saved-insights.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

type Json = Record<string, unknown>;
type Kind = ShareTarget['kind'];

// ---- Management (personal key or console session) ---------------------------------------------------------------

/** The target a management route names, checked to exist in the project. */
function targetOf(rt: WorkerRuntime, item: TaskItem, kind: Kind): ShareTarget {
  const projectId = projectIdOf(item);
  if (kind === 'web_analytics') return { kind };
  const id = intParam(item, 'id');
  const found = kind === 'dashboard' ? rt.meta.dashboards.get([projectId, id]) : rt.meta.insights.get([projectId, id]);
  if (!found || found.deleted) throw Errors.notFound(`${kind === 'dashboard' ? 'Dashboard' : 'Insight'} not found.`);
  return { kind, id };
}

const emailOf = (meta: MetaStore) => (userId: number | null): string => (userId === null ? 'deleted user' : meta.users.get(userId)?.email ?? 'deleted user');

function configOf(meta: MetaStore, projectId: number, target: ShareTarget): SharingConfiguration | undefined {
  return meta.sharing.get([projectId, targetKey(target)]);
}

/** Stores `next` and keeps the token index pointing at its current token only. Inside `meta.write`. */
function save(meta: MetaStore, before: SharingConfiguration | undefined, next: SharingConfiguration): void {
  const key = targetKey(next.target);
  if (before && before.access_token !== next.access_token) meta.sharingTokens.remove(before.access_token);
  meta.sharingTokens.put(next.access_token, [next.project_id, key]);
  meta.sharing.put([next.project_id, key], next);
}

function fresh(projectId: number, target: ShareTarget): SharingConfiguration {
  return {
    project_id: projectId, target, enabled: false, access_token: newAccessToken(), created_at: nowIso(), password_required: false,
    passwords: [], session_secret: newSessionSecret(), settings: null,
  };
}

const retrieve = (kind: Kind): OpHandler => (item, rt) => {
  rt.meta.env.resetReadTxn();
  const target = targetOf(rt, item, kind);
  return json(200, sharingJson(configOf(rt.meta, projectIdOf(item), target), emailOf(rt.meta)));
};

const update = (kind: Kind): OpHandler => async (item, rt) => {
  const projectId = projectIdOf(item);
  const body = bodyOf(item);
  const saved = await rt.meta.write(() => {
    const target = targetOf(rt, item, kind);
    const before = configOf(rt.meta, projectId, target);
    const next: SharingConfiguration = { ...(before ?? fresh(projectId, target)) };
    if (typeof body.enabled === 'boolean') next.enabled = body.enabled;
    if (typeof body.password_required === 'boolean') next.password_required = body.password_required;
    if (body.settings !== undefined) next.settings = body.settings as Json | null;
    save(rt.meta, before, next);
    return next;
  });
  return json(200, sharingJson(saved, emailOf(rt.meta)));
};

/** A new access token and session secret: the old link, and every viewer it unlocked, open nothing any more. */
const refresh = (kind: Kind): OpHandler => async (item, rt) => {
  const projectId = projectIdOf(item);
  const saved = await rt.meta.write(() => {
    const target = targetOf(rt, item, kind);
    const before = configOf(rt.meta, projectId, target);
    const next: SharingConfiguration = { ...(before ?? fresh(projectId, target)), access_token: newAccessToken(), session_secret: newSessionSecret() };
    save(rt.meta, before, next);
    return next;
  });
  return json(200, sharingJson(saved, emailOf(rt.meta)));
};

const createPassword = (kind: Kind): OpHandler => async (item, rt) => {
  const projectId = projectIdOf(item);
  const body = bodyOf(item);
  const raw = typeof body.raw_password === 'string' && body.raw_password !== '' ? body.raw_password : randomAlnum(16);
  const problem = passwordProblem(raw);
  if (problem) invalidInput('raw_password', problem);
  const note = typeof body.note === 'string' ? body.note : '';
  const hash = await hashPassword(raw);
  const created = await rt.meta.write(() => {
    const target = targetOf(rt, item, kind);
    const before = configOf(rt.meta, projectId, target);
    if (!before?.password_required) throw Errors.validation('password_required', 'invalid_input', 'Password protection must be enabled before creating passwords.');
    const password: SharePassword = { id: rt.meta.nextId('share_password'), hash, note, created_at: nowIso(), created_by: principalOf(item).userId || null };
    save(rt.meta, before, { ...before, passwords: [...before.passwords, password] });
    return password;
  });
  return json(201, { id: created.id, password: raw, note: created.note, created_at: created.created_at, created_by_email: emailOf(rt.meta)(created.created_by) });
};

/** Deleting a password also locks out every viewer who unlocked the link with it. */
const deletePassword = (kind: Kind): OpHandler => async (item, rt) => {
  const projectId = projectIdOf(item);
  const passwordId = intParam(item, 'password_id', 'Password not found.');
  await rt.meta.write(() => {
    const target = targetOf(rt, item, kind);
    const before = configOf(rt.meta, projectId, target);
    if (!before?.passwords.some((p) => p.id === passwordId)) throw Errors.notFound('Password not found.');
    save(rt.meta, before, { ...before, passwords: before.passwords.filter((p) => p.id !== passwordId) });
  });
  return empty(204);
};

/** Every management op, by the route table's names: `<dashboards|insights|web_analytics>.sharing.<action>`. */
export const SHARING_OPS: Record<string, OpHandler> = Object.fromEntries(
  ([['dashboards', 'dashboard'], ['insights', 'insight'], ['web_analytics', 'web_analytics']] as const).flatMap(([prefix, kind]) => [
    [`${prefix}.sharing.retrieve`, retrieve(kind)],
    [`${prefix}.sharing.update`, update(kind)],
    [`${prefix}.sharing.refresh`, refresh(kind)],
    [`${prefix}.sharing.passwords_create`, createPassword(kind)],
    [`${prefix}.sharing.passwords_delete`, deletePassword(kind)],
  ]),
);

// ---- What a link opens (no credentials) -------------------------------------------------------------------------

const passwordRequired = () => new ApiError(401, 'authentication_error', 'password_required', 'This shared link is protected by a password.');
const incorrectPassword = () => new ApiError(401, 'authentication_error', 'incorrect_password', 'Incorrect password.');

/** The live link of a token (enabled, current, its target still there), else 404 whatever the reason. */
function linkOf(rt: WorkerRuntime, item: TaskItem): SharingConfiguration {
  const token = item.params.access_token ?? '';
  if (!looksLikeAccessToken(token)) throw Errors.notFound();
  rt.meta.env.resetReadTxn();
  const at = rt.meta.sharingTokens.get(token);
  const c = at ? rt.meta.sharing.get(at) : undefined;
  if (!c || !c.enabled || c.access_token !== token || !rt.meta.projects.get(c.project_id)) throw Errors.notFound();
  const t = c.target;
  if (t.kind !== 'web_analytics') {
    const found = t.kind === 'dashboard' ? rt.meta.dashboards.get([c.project_id, t.id]) : rt.meta.insights.get([c.project_id, t.id]);
    if (!found || found.deleted) throw Errors.notFound();
  }
  return c;
}

/** A password-protected link opens only for `Authorization: Bearer <shareToken>` from its unlock. */
function unlockedLinkOf(rt: WorkerRuntime, item: TaskItem): SharingConfiguration {
  const c = linkOf(rt, item);
  if (!c.password_required) return c;
  const bearer = /^Bearer\s+(\S+)$/i.exec(item.meta.authorization)?.[1] ?? '';
  if (!shareSessionValid(c, bearer, Date.now())) throw passwordRequired();
  return c;
}

const answersOf = new WeakMap<WorkerRuntime, ShareAnswers>();
function shareAnswers(rt: WorkerRuntime): ShareAnswers {
  let a = answersOf.get(rt);
  if (!a) answersOf.set(rt, (a = new ShareAnswers(rt.config.shareCacheS * 1000)));
  return a;
}

/** A query's answer for a link: from the share cache, else computed in the share turn through the query cache. */
function shareAnswer(rt: WorkerRuntime, item: TaskItem, projectId: number, query: Json): Promise<ShareAnswer> {
  const runnable = runnableQuery(query);
  return shareAnswers(rt).answer(`${projectId}\u0000${JSON.stringify(runnable)}`, Date.now(), async () => {
    const answer = await answerQuery(rt, runnable, { team: projectId, now: item.meta.now, url: '' }, 'blocking');
    return answer!.value;
  });
}

/** An insight as a shared page shows it: what it is and its answer, no authors, ids of dashboards or cache keys. */
async function sharedInsight(rt: WorkerRuntime, item: TaskItem, insight: Insight): Promise<Json> {
  const query = queryOfInsight(insight);
  const answer = query ? await shareAnswer(rt, item, insight.project_id, query) : undefined;
  const value = answer?.value;
  return {
    short_id: insight.short_id, name: insight.name, description: insight.description, filters: insight.filters, query,
    result: value ? (value.results ?? value.result ?? null) : null, columns: value?.columns ?? null,
    is_cached: answer?.is_cached ?? false, last_refresh: answer?.last_refresh ?? null,
  };
}

async function sharedDashboard(rt: WorkerRuntime, item: TaskItem, d: Dashboard): Promise<Json> {
  const tiles = [];
  for (const t of d.tiles) {
    const insight = rt.meta.insights.get([d.project_id, t.insight_id]);
    if (!insight || insight.deleted) continue;
    tiles.push({ id: t.id, layouts: t.layouts, color: t.color, insight: await sharedInsight(rt, item, insightOnDashboard(insight, d.filters)) });
  }
  return { name: d.name, description: d.description, filters: d.filters ?? {}, tiles };
}

export const viewShared: OpHandler = (item, rt) => answering(async (): Promise<Reply> => {
  const c = unlockedLinkOf(rt, item);
  const project = rt.meta.projects.get(c.project_id)!;
  const head = { type: c.target.kind, project: { name: project.name, timezone: project.timezone ?? 'UTC' }, settings: c.settings };
  const t = c.target;
  if (t.kind === 'dashboard') return json(200, { ...head, dashboard: await sharedDashboard(rt, item, rt.meta.dashboards.get([c.project_id, t.id])!) });
  if (t.kind === 'insight') return json(200, { ...head, insight: await sharedInsight(rt, item, rt.meta.insights.get([c.project_id, t.id])!) });
  return json(200, head);
});

export const queryShared: OpHandler = (item, rt) => answering(async (): Promise<Reply> => {
  const c = unlockedLinkOf(rt, item);
  if (c.target.kind !== 'web_analytics') throw Errors.notFound();
  // The front has parsed the body as JSON (a malformed one is its 400 parse_error).
  const query = bodyOf(item).query;
  const problem = sharedWebQueryProblem(query);
  if (problem) throw Errors.validation('query', 'invalid_input', problem);
  const answer = await shareAnswer(rt, item, c.project_id, query as Json);
  return json(200, { ...answer.value, is_cached: answer.is_cached, last_refresh: answer.last_refresh });
});

export const unlockShared: OpHandler = async (item, rt) => {
  const c = linkOf(rt, item);
  if (!c.password_required) return json(200, { shareToken: null });
  const given = String(bodyOf(item).password ?? '');
  for (const p of c.passwords) {
    if (await verifyPassword(given, p.hash)) return json(200, { shareToken: shareSessionToken(c, p.id, Date.now()) });
  }
  throw incorrectPassword();
};
