/**
 * The due index of alerts and subscriptions (`notifications_due` in the metadata environment): one entry
 * [epoch ms, project, kind, id] per piece of scheduled work, read earliest first by the scheduler
 * (./scheduler.ts). Every entry is written in the transaction that writes the record it stands for, and a job
 * removes its entry in the transaction that records what it did; a job also checks that its entry still stands for
 * the record as stored (the record's own time equals the entry's), so an entry left behind by an edit does nothing.
 */
import type { MetaStore } from '../../stores/meta/meta-store.js';

/**
 * `alert`: check an alert (at its `next_check_at`); `subscription`: build and send a subscription's report (at its
 * `next_delivery_date`); `alert_outbox` / `subscription_outbox`: deliver what a check or report left to send (at the
 * earliest attempt due).
 */
export type DueKind = 'alert' | 'subscription' | 'alert_outbox' | 'subscription_outbox';
export type DueKey = [number, number, DueKind, string | number];

export const dueKey = (at: number, projectId: number, kind: DueKind, id: string | number): DueKey => [at, projectId, kind, id];

/** The earliest entry, whether due or not. */
export function firstDue(meta: MetaStore): DueKey | undefined {
  for (const key of meta.notificationsDue.getKeys({ limit: 1 })) return key as DueKey;
  return undefined;
}

/** Only inside `meta.write`. */
export function putDue(meta: MetaStore, key: DueKey): void {
  meta.notificationsDue.put(key, 1);
}

/** Only inside `meta.write`; whether the entry was there. */
export function takeDue(meta: MetaStore, key: DueKey): boolean {
  if (meta.notificationsDue.get(key) === undefined) return false;
  meta.notificationsDue.remove(key);
  return true;
}
