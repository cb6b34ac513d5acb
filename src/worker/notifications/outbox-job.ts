/**
 * Delivers what alert checks and subscription reports stored to send (src/domain/notifications/outbox.ts): every
 * target whose attempt is due is tried (outside any transaction), then one transaction records each attempt on the
 * message it belongs to, removes this job's due entry and puts one at the next attempt still due, if any. An
 * attempt is recorded only if the target is still where it was (no other run recorded one meanwhile).
 */
import type { Alert, Subscription } from '../../domain/model.js';
import { afterAttempt, dueTargets, nextAttemptAt, type AttemptResult, type OutgoingMessage } from '../../domain/notifications/outbox.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { dueKey, putDue, takeDue, type DueKey } from './due.js';
import { iso, type JobContext } from './context.js';

/** How the outbox reads and writes the messages of one kind of record. */
interface Owner<R> {
  get(meta: MetaStore, projectId: number, id: string | number): R | undefined;
  put(meta: MetaStore, r: R): void;
  /** The record's messages, by a key unique within it. */
  messages(r: R): [string, OutgoingMessage][];
  replace(r: R, key: string, m: OutgoingMessage): R;
  /** After a successful delivery at `at`. */
  delivered(r: R, at: number): R;
}

const ALERTS: Owner<Alert> = {
  get: (meta, projectId, id) => meta.alerts.get([projectId, String(id)]),
  put: (meta, a) => meta.alerts.put([a.project_id, a.id], a),
  messages: (a) => a.checks.flatMap((c): [string, OutgoingMessage][] => (c.outgoing ? [[c.id, c.outgoing]] : [])),
  replace: (a, key, m) => ({ ...a, checks: a.checks.map((c) => (c.id === key ? { ...c, outgoing: m } : c)) }),
  delivered: (a, at) => ({ ...a, last_notified_at: iso(at) }),
};

const SUBSCRIPTIONS: Owner<Subscription> = {
  get: (meta, projectId, id) => meta.subscriptions.get([projectId, Number(id)]),
  put: (meta, s) => meta.subscriptions.put([s.project_id, s.id], s),
  messages: (s) => s.reports.map((r): [string, OutgoingMessage] => [String(r.id), r.outgoing]),
  replace: (s, key, m) => ({ ...s, reports: s.reports.map((r) => (String(r.id) === key ? { ...r, outgoing: m } : r)) }),
  delivered: (s) => s,
};

interface Tried {
  message: string;
  index: number;
  attemptsBefore: number;
  result: AttemptResult;
  at: number;
}

async function deliver<R>(ctx: JobContext, key: DueKey, owner: Owner<R>): Promise<void> {
  const [, projectId, kind, id] = key;
  ctx.meta.env.resetReadTxn();
  const record = owner.get(ctx.meta, projectId, id);
  const tried: Tried[] = [];
  if (record) {
    const now = ctx.now();
    // When the node closes, what is left (and an attempt cut short) is not recorded: it is sent at the next start.
    sending: for (const [message, m] of owner.messages(record)) {
      for (const index of dueTargets(m, now)) {
        if (ctx.signal.aborted) break sending;
        const result = await ctx.send(m.targets[index]!.target, m.message, ctx.signal);
        if (ctx.signal.aborted) break sending;
        tried.push({ message, index, attemptsBefore: m.targets[index]!.attempts, result, at: ctx.now() });
      }
    }
  }
  const retryMs = ctx.config.deliveryRetryS * 1000;
  await ctx.meta.write(() => {
    takeDue(ctx.meta, key);
    let current = owner.get(ctx.meta, projectId, id);
    if (!current) return;
    for (const t of tried) {
      const m = owner.messages(current).find(([k]) => k === t.message)?.[1];
      if (!m || m.targets[t.index]?.attempts !== t.attemptsBefore) continue;
      current = owner.replace(current, t.message, afterAttempt(m, t.index, t.result, t.at, retryMs));
      if (t.result.ok) current = owner.delivered(current, t.at);
    }
    owner.put(ctx.meta, current);
    const next = nextAttemptAt(owner.messages(current).map(([, m]) => m));
    if (next !== null) putDue(ctx.meta, dueKey(next, projectId, kind, id));
  });
  for (const t of tried) {
    if (t.result.ok) ctx.counters.deliveries_ok++;
    else {
      ctx.counters.deliveries_failed++;
      ctx.log.warn({ event: 'delivery_failed', kind, project_id: projectId, id, error: t.result.error }, `a ${kind === 'alert_outbox' ? 'alert' : 'subscription'} delivery failed: ${t.result.error}`);
    }
  }
}

/** Runs the entry `key` (kind `alert_outbox` or `subscription_outbox`). */
export function deliverOutbox(ctx: JobContext, key: DueKey): Promise<void> {
  return key[2] === 'alert_outbox' ? deliver(ctx, key, ALERTS) : deliver(ctx, key, SUBSCRIPTIONS);
}
