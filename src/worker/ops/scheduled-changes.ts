/**
 * PostHog's scheduled changes resource, `/api/projects/:id/scheduled_changes/` (posthog/api/scheduled_change.py):
 * list (`?model_name=FeatureFlag&record_id=<flag id>`), create, retrieve, PATCH (until it has run) and DELETE
 * (cancel, until it has run). Creating or editing one takes the right to edit its flag. The node applies them
 * (src/worker/scheduled-changes.ts).
 */
import { INTERVALS, payloadError } from '../../domain/flags/scheduled-change.js';
import type { ScheduledChange } from '../../domain/model.js';
import { Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { all } from '../../stores/lmdb-env.js';
import { paginate } from '../pagination.js';
import { json } from '../reply.js';
import { dueKey } from '../scheduled-changes.js';
import { userOf, userRefById } from './accounts.js';
import { canEditFlag } from './flag-permissions.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

function serialize(meta: MetaStore, c: ScheduledChange): Record<string, unknown> {
  return {
    id: c.id,
    team_id: c.project_id,
    record_id: c.record_id,
    model_name: c.model_name,
    payload: c.payload,
    scheduled_at: c.scheduled_at,
    executed_at: c.executed_at,
    failure_reason: c.failure_reason,
    failure_count: c.failure_count,
    created_at: c.created_at,
    created_by: userRefById(meta, c.created_by),
    updated_at: c.updated_at,
    is_recurring: c.is_recurring,
    recurrence_interval: c.recurrence_interval,
    cron_expression: null,
    last_executed_at: c.last_executed_at,
    end_date: c.end_date,
    timezone: null,
  };
}

function changeOf(meta: MetaStore, projectId: number, id: number): ScheduledChange {
  const c = meta.scheduledChanges.get([projectId, id]);
  if (!c) throw Errors.notFound();
  return c;
}

function isoDate(raw: unknown, attr: string): string {
  if (typeof raw !== 'string' || Number.isNaN(Date.parse(raw))) throw Errors.validation(attr, 'invalid', 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].');
  return new Date(Date.parse(raw)).toISOString();
}

/** The fields a create or PATCH sets, checked as PostHog's serializer checks them; `before` for a PATCH. */
function fieldsOf(body: Record<string, unknown>, before: ScheduledChange | null): Partial<ScheduledChange> {
  const out: Partial<ScheduledChange> = {};
  if (before && body.record_id !== undefined && String(body.record_id) !== before.record_id) {
    throw Errors.validation('record_id', 'invalid_input', 'Cannot change the target record of an existing scheduled change.');
  }
  if (before && body.model_name !== undefined && body.model_name !== before.model_name) {
    throw Errors.validation('model_name', 'invalid_input', 'Cannot change the model type of an existing scheduled change.');
  }
  if (!before) {
    if (body.record_id === undefined || body.record_id === null || body.record_id === '') throw Errors.required('record_id');
    if (body.model_name !== 'FeatureFlag') throw Errors.validation('model_name', 'invalid_choice', `"${String(body.model_name ?? '')}" is not a valid choice: only FeatureFlag is supported.`);
    out.record_id = String(body.record_id);
    out.model_name = 'FeatureFlag';
  }
  if (body.payload !== undefined || !before) {
    const problem = payloadError(body.payload);
    if (problem) throw Errors.validation(problem.attr, 'invalid_input', problem.detail);
    out.payload = body.payload as ScheduledChange['payload'];
  }
  if (body.scheduled_at !== undefined || !before) {
    if (body.scheduled_at === undefined || body.scheduled_at === null) throw Errors.required('scheduled_at');
    out.scheduled_at = isoDate(body.scheduled_at, 'scheduled_at');
  }
  if (body.is_recurring !== undefined) out.is_recurring = body.is_recurring === true;
  if (body.recurrence_interval !== undefined) {
    const interval = body.recurrence_interval;
    if (interval !== null && !INTERVALS.includes(interval as (typeof INTERVALS)[number])) {
      throw Errors.validation('recurrence_interval', 'invalid_choice', `Must be one of: ${INTERVALS.join(', ')}`);
    }
    out.recurrence_interval = interval as ScheduledChange['recurrence_interval'];
  }
  if (body.cron_expression !== undefined && body.cron_expression !== null) {
    throw Errors.validation('cron_expression', 'invalid_input', 'Quill does not support cron expressions: use recurrence_interval.');
  }
  if (body.end_date !== undefined) out.end_date = body.end_date === null ? null : isoDate(body.end_date, 'end_date');
  const merged = { is_recurring: false, recurrence_interval: null, end_date: null, ...before, ...out } as ScheduledChange;
  if (merged.is_recurring) {
    if (!merged.recurrence_interval) throw Errors.validation('recurrence_interval', 'invalid_input', 'recurrence_interval is required when is_recurring is true.');
    if (merged.payload.operation !== 'update_status') {
      throw Errors.validation('payload', 'invalid_input', 'Only update_status schedules can recur (add_release_condition would add its conditions again on each run).');
    }
  } else if (!before && merged.recurrence_interval) {
    throw Errors.validation('recurrence_interval', 'invalid_input', 'Cannot set recurrence_interval when is_recurring is false for new schedules.');
  }
  if (merged.end_date && Date.parse(merged.end_date) <= Date.parse(merged.scheduled_at)) {
    throw Errors.validation('end_date', 'invalid_input', 'End date must be after the scheduled start date.');
  }
  return out;
}

/** The flag must exist and the caller must be allowed to edit it (PostHog's `_check_target_edit_permission`). */
function checkFlag(meta: MetaStore, projectId: number, recordId: string, userId: number): void {
  const flag = /^\d+$/.test(recordId) ? meta.flags.get([projectId, Number(recordId)]) : undefined;
  if (!flag || flag.deleted) throw Errors.validation('record_id', 'invalid_input', 'Feature flag not found');
  if (!canEditFlag(meta, userOf(meta, userId), flag)) throw Errors.permissionDenied("You don't have edit permissions for this feature flag");
}

export const listScheduledChanges: OpHandler = (item, rt) => {
  const projectId = projectIdOf(item);
  rt.meta.env.resetReadTxn();
  const q = item.meta.query;
  const rows = all(rt.meta.scheduledChanges.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value))
    .filter((c) => (q.model_name === undefined || c.model_name === q.model_name) && (q.record_id === undefined || c.record_id === q.record_id))
    .sort((a, b) => a.scheduled_at.localeCompare(b.scheduled_at) || a.id - b.id);
  return json(200, paginate(rows.map((c) => serialize(rt.meta, c)), item.meta));
};

export const retrieveScheduledChange: OpHandler = (item, rt) => {
  rt.meta.env.resetReadTxn();
  return json(200, serialize(rt.meta, changeOf(rt.meta, projectIdOf(item), intParam(item, 'id'))));
};

export const createScheduledChange: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const userId = principalOf(item).userId;
  const fields = fieldsOf(bodyOf(item), null);
  const change = await rt.meta.write(() => {
    checkFlag(rt.meta, projectId, fields.record_id!, userId);
    const now = nowIso();
    const record: ScheduledChange = {
      id: rt.meta.nextId('scheduled_change'), project_id: projectId, record_id: fields.record_id!, model_name: 'FeatureFlag',
      payload: fields.payload!, scheduled_at: fields.scheduled_at!, executed_at: null, failure_reason: null, failure_count: 0,
      is_recurring: fields.is_recurring ?? false, recurrence_interval: fields.recurrence_interval ?? null, last_executed_at: null,
      end_date: fields.end_date ?? null, created_by: userId || null, created_at: now, updated_at: now,
    };
    rt.meta.scheduledChanges.put([projectId, record.id], record);
    rt.meta.scheduledDue.put(dueKey(record), 1);
    return record;
  });
  return json(201, serialize(rt.meta, change));
};

/** A change that ran (one-time), or failed, is history: it cannot be edited or cancelled. */
function checkPending(c: ScheduledChange): void {
  if ((c.executed_at !== null && !c.is_recurring) || c.failure_reason !== null) throw Errors.scheduledChangeDone();
}

export const updateScheduledChange: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const userId = principalOf(item).userId;
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const change = await rt.meta.write(() => {
    const before = changeOf(rt.meta, projectId, id);
    checkPending(before);
    checkFlag(rt.meta, projectId, before.record_id, userId);
    const next: ScheduledChange = { ...before, ...fieldsOf(body, before), updated_at: nowIso() };
    rt.meta.scheduledDue.remove(dueKey(before));
    rt.meta.scheduledChanges.put([projectId, id], next);
    if (next.executed_at === null) rt.meta.scheduledDue.put(dueKey(next), 1);
    return next;
  });
  return json(200, serialize(rt.meta, change));
};

/** Cancelling: the change and its due entry go, in one transaction (the runner checks both). */
export const deleteScheduledChange: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const userId = principalOf(item).userId;
  const id = intParam(item, 'id');
  await rt.meta.write(() => {
    const before = changeOf(rt.meta, projectId, id);
    checkPending(before);
    checkFlag(rt.meta, projectId, before.record_id, userId);
    rt.meta.scheduledDue.remove(dueKey(before));
    rt.meta.scheduledChanges.remove([projectId, id]);
  });
  return { status: 204, body: '' };
};
