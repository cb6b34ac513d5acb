/**
 * The actions API: list (live actions, `search`, CSV), create, retrieve, PATCH/PUT (including the soft
 * delete), the refused hard delete, and the activity log. A name is unique among the project's live actions.
 * Steps are validated and normalised by src/domain/actions/steps.ts, so every stored action compiles.
 *
 * Analyses resolve actions when they parse their entities (src/worker/analytics/action-lookup.ts); a change to an
 * action marks the project's cached answers stale on every worker (the shared project version), since an answer
 * over an action depends on its definition as much as on the events.
 */
import { stepsOf } from '../../domain/actions/steps.js';
import { pyType } from '../../domain/py-type.js';
import type { Action } from '../../domain/model.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { userRefById } from './accounts.js';
import { activityEndpoints, changesBetween, logActivity } from './activity-log.js';
import { answering } from './insights.js';
import { answer } from './persons/person-view.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

const MAX_NAME_LENGTH = 400;
/** Fields whose changes the activity log reports. */
const LOGGED_FIELDS = ['name', 'description', 'tags', 'steps', 'deleted', 'pinned_at'] as const;

export function serializeAction(meta: MetaStore, a: Action): Record<string, unknown> {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    tags: a.tags,
    steps: a.steps,
    created_at: a.created_at,
    created_by: userRefById(meta, a.created_by),
    updated_at: a.updated_at,
    deleted: a.deleted,
    // Actions are matched when queried: nothing is ever being calculated.
    is_calculating: false,
    last_calculated_at: a.updated_at,
    team_id: a.project_id,
    is_action: true,
    pinned_at: a.pinned_at,
  };
}

function actionOf(meta: MetaStore, team: number, id: number): Action {
  const a = meta.actions.get([team, id]);
  if (!a) throw Errors.notFound();
  return a;
}

function nameOf(v: unknown): string {
  if (v === undefined || v === null) throw Errors.required('name');
  if (typeof v !== 'string') throw Errors.validation('name', 'invalid', 'Not a valid string.');
  if (v.trim() === '') throw Errors.validation('name', 'blank', 'This field may not be blank.');
  if (v.length > MAX_NAME_LENGTH) throw Errors.validation('name', 'max_length', `Ensure this field has no more than ${MAX_NAME_LENGTH} characters.`);
  return v;
}

function descriptionOf(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw Errors.validation('description', 'invalid', 'Not a valid string.');
  return v;
}

function tagsOf(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw Errors.validation('tags', 'not_a_list', `Expected a list of items but got type "${pyType(v)}".`);
  const tags: string[] = [];
  for (const tag of v) {
    if (typeof tag !== 'string') throw Errors.validation('tags', 'invalid', 'Not a valid string.');
    const t = tag.trim();
    if (t !== '' && !tags.includes(t)) tags.push(t);
  }
  return tags;
}

function deletedOf(v: unknown, fallback: boolean): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw Errors.validation('deleted', 'invalid', 'Must be a valid boolean.');
  return v;
}

/** `pinned_at`: any value pins (at the server's time, kept when already pinned); null or "" unpins. */
function pinnedAtOf(v: unknown, before: string | null, now: string): string | null {
  if (v === undefined) return before;
  if (v === null || v === '') return null;
  return before ?? now;
}

/** A live action of the project other than `exceptId` already has the name: PostHog's wording, with its id. */
function checkUniqueName(meta: MetaStore, team: number, name: string, exceptId: number | null): void {
  const other = meta.actionsOf(team).find((a) => !a.deleted && a.name === name && a.id !== exceptId);
  if (other) throw Errors.validation('name', 'unique', `This project already has an action with this name, ID ${other.id}`);
}

export const listActions: OpHandler = (item, rt) => {
  const team = projectIdOf(item);
  rt.meta.env.resetReadTxn();
  const search = item.meta.query.search?.toLowerCase() ?? '';
  const actions = rt.meta.actionsOf(team).filter((a) => !a.deleted && (search === '' || a.name.toLowerCase().includes(search)));
  actions.sort((a, b) => b.id - a.id);
  return answer(item, 200, { results: actions.map((a) => serializeAction(rt.meta, a)) }, 'actions.csv');
};

export const retrieveAction: OpHandler = (item, rt) => {
  rt.meta.env.resetReadTxn();
  return json(200, serializeAction(rt.meta, actionOf(rt.meta, projectIdOf(item), intParam(item, 'id'))));
};

export const createAction: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const userId = principalOf(item).userId;
  const body = bodyOf(item);
  const name = nameOf(body.name);
  const fields = {
    description: descriptionOf(body.description), tags: tagsOf(body.tags), steps: stepsOf(body.steps ?? []),
    deleted: deletedOf(body.deleted, false),
  };
  const action = await rt.meta.write(() => {
    checkUniqueName(rt.meta, team, name, null);
    const now = nowIso();
    const record: Action = {
      id: rt.meta.nextId('action'), project_id: team, name, ...fields, created_by: userId, created_at: now, updated_at: now,
      pinned_at: pinnedAtOf(body.pinned_at, null, now),
    };
    rt.meta.actions.put([team, record.id], record);
    logActivity(rt.meta, {
      project_id: team, user_id: userId, activity: 'created', scope: 'Action', item_id: String(record.id),
      detail: { changes: null, merge: null, trigger: null, name: record.name, short_id: null, type: null },
    });
    return record;
  });
  rt.shared.projectChanged(team);
  return json(201, serializeAction(rt.meta, action));
});

export const updateAction: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const userId = principalOf(item).userId;
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const name = body.name === undefined ? undefined : nameOf(body.name);
  const steps = body.steps === undefined ? undefined : stepsOf(body.steps);
  const action = await rt.meta.write(() => {
    const before = actionOf(rt.meta, team, id);
    const now = nowIso();
    const next: Action = {
      ...before,
      name: name ?? before.name,
      description: body.description === undefined ? before.description : descriptionOf(body.description),
      tags: body.tags === undefined ? before.tags : tagsOf(body.tags),
      steps: steps ?? before.steps,
      deleted: deletedOf(body.deleted, before.deleted),
      pinned_at: pinnedAtOf(body.pinned_at, before.pinned_at, now),
    };
    // Renaming, or bringing a deleted action back, must not make two live actions share a name.
    if (!next.deleted && (next.name !== before.name || before.deleted)) checkUniqueName(rt.meta, team, next.name, id);
    const changes = changesBetween('Action', before as unknown as Record<string, unknown>, next as unknown as Record<string, unknown>, LOGGED_FIELDS);
    if (changes.length === 0) return before;
    next.updated_at = now;
    rt.meta.actions.put([team, id], next);
    logActivity(rt.meta, {
      project_id: team, user_id: userId, activity: !before.deleted && next.deleted ? 'deleted' : 'updated', scope: 'Action',
      item_id: String(id), detail: { changes, merge: null, trigger: null, name: next.name, short_id: null, type: null },
    });
    return next;
  });
  rt.shared.projectChanged(team);
  return json(200, serializeAction(rt.meta, action));
});

/** Hard delete is not allowed, as for flags and cohorts: the action stays as it is. */
export const deleteAction: OpHandler = (item, rt) => {
  rt.meta.env.resetReadTxn();
  actionOf(rt.meta, projectIdOf(item), intParam(item, 'id'));
  throw new ApiError(405, 'invalid_request', 'method_not_allowed',
    'Hard delete of an action is not allowed. Use PATCH with {"deleted": true} to delete it.');
};

const actionActivityEndpoints = activityEndpoints('Action', (rt, team, id) => actionOf(rt.meta, team, id));
export const actionActivity = actionActivityEndpoints.item;
export const allActionsActivity = actionActivityEndpoints.all;
