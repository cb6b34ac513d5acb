/**
 * The activity log: who changed what, with field-level before/after. Entries are written in the same transaction
 * as the change they describe.
 */
import { randomUUID } from 'node:crypto';
import { all } from '../../stores/lmdb-env.js';
import type { ActivityChange, ActivityEntry } from '../../domain/model.js';
import type { RequestMeta } from '../../protocol/worker-messages.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { MAX_LIMIT, urlWith } from '../pagination.js';
import type { WorkerRuntime } from '../runtime.js';
import { json } from '../reply.js';
import { intParam, nowIso, projectIdOf, type OpHandler } from './types.js';

/** Canonical JSON (sorted keys) so that key order never counts as a change. */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'undefined';
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
}

export function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

export function changesBetween(type: string, before: Record<string, unknown>, after: Record<string, unknown>, fields: readonly string[]): ActivityChange[] {
  const changes: ActivityChange[] = [];
  for (const field of fields) {
    if (!sameValue(before[field], after[field])) {
      changes.push({ type, action: 'changed', field, before: before[field] ?? null, after: after[field] ?? null });
    }
  }
  return changes;
}

export function logActivity(meta: MetaStore, entry: Omit<ActivityEntry, 'id' | 'created_at'>): void {
  const created_at = nowIso();
  const record: ActivityEntry = { ...entry, id: randomUUID(), created_at };
  meta.activity.put([entry.project_id, Date.parse(created_at), record.id], record);
}

/** Newest first; `filter` narrows to one scope/item. */
export function activityOf(meta: MetaStore, projectId: number, filter: (e: ActivityEntry) => boolean): ActivityEntry[] {
  return all(meta.activity
    .getRange({ start: [projectId, Number.MAX_SAFE_INTEGER], end: [projectId, 0], reverse: true })
    .map((e) => e.value)
    .filter(filter));
}

export function serializeActivity(meta: MetaStore, e: ActivityEntry): object {
  const user = e.user_id == null ? undefined : meta.users.get(e.user_id);
  return {
    id: e.id,
    user: user ? { first_name: user.first_name, email: user.email } : { first_name: 'System', email: null, is_system: true },
    activity: e.activity,
    scope: e.scope,
    item_id: e.item_id,
    detail: e.detail,
    created_at: e.created_at,
  };
}

/** PostHog's activity pagination: `limit` (default 10) and `page` (default 1), with `total_count`. */
export function activityPage(meta: MetaStore, entries: ActivityEntry[], req: RequestMeta): object {
  const limit = /^\d+$/.test(req.query.limit ?? '') && Number(req.query.limit) > 0 ? Math.min(Number(req.query.limit), MAX_LIMIT) : 10;
  const page = /^\d+$/.test(req.query.page ?? '') && Number(req.query.page) > 0 ? Number(req.query.page) : 1;
  const start = (page - 1) * limit;
  const results = entries.slice(start, start + limit).map((e) => serializeActivity(meta, e));
  return {
    results,
    next: start + limit < entries.length ? urlWith(req, { page: String(page + 1), limit: String(limit) }) : null,
    previous: page > 1 ? urlWith(req, { page: String(page - 1), limit: String(limit) }) : null,
    total_count: entries.length,
  };
}

/**
 * The two activity endpoints of a scope (`FeatureFlag`, `Action`, `Experiment`…): `item` answers one item's log
 * once `exists` found the item (it throws the 404), `all` every item's of the project. Both read the newest
 * committed state (a write on another worker is seen at once).
 */
export function activityEndpoints(scope: string, exists: (rt: WorkerRuntime, projectId: number, id: number) => void): { item: OpHandler; all: OpHandler } {
  const page = (rt: WorkerRuntime, projectId: number, itemId: number | null, req: RequestMeta) => {
    rt.meta.env.resetReadTxn();
    const wanted = itemId === null ? null : String(itemId);
    return activityPage(rt.meta, activityOf(rt.meta, projectId, (e) => e.scope === scope && (wanted === null || e.item_id === wanted)), req);
  };
  return {
    item: (item, rt) => {
      const projectId = projectIdOf(item);
      const id = intParam(item, 'id');
      rt.meta.env.resetReadTxn();
      exists(rt, projectId, id);
      return json(200, page(rt, projectId, id, item.meta));
    },
    all: (item, rt) => json(200, page(rt, projectIdOf(item), null, item.meta)),
  };
}
