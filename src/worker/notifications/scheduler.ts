/**
 * The node's scheduler of alerts and subscriptions, a WorkerService (src/worker/service.ts) active on worker 0
 * only, so each piece of work has one runner. Every QUILL_ALERTS_TICK_MS it reads the earliest entry of the due
 * index (./due.ts: one LMDB read) and, while entries are due, runs them one at a time, earliest first: alert checks
 * (./alert-checks.ts), subscription reports (./subscription-reports.ts) and deliveries (./outbox-job.ts).
 *
 * Off the hot paths: it runs from a timer, and the insights it computes go through the worker's analysis gate and
 * query budget like any request's (./insight-port.ts), with their scans slicing as every analysis does. When the
 * gate is full or the node closing, the job waits for a later tick (Postponed), recording nothing.
 */
import { ServiceKey, type ServiceHost, type WorkerService } from '../service.js';
import { checkAlert } from './alert-checks.js';
import { Postponed, type InsightPort, type JobContext, type JobCounters } from './context.js';
import { firstDue, type DueKey } from './due.js';
import { deliverOutbox } from './outbox-job.js';
import { senderFor, type Send } from './sender.js';
import { reportSubscription } from './subscription-reports.js';

export const NOTIFICATIONS = new ServiceKey<NotificationScheduler>('notifications');

export class NotificationScheduler implements WorkerService {
  readonly name = 'notifications';
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private readonly closing = new AbortController();
  private readonly ctx: JobContext;

  constructor(private readonly host: ServiceHost, insights: InsightPort, send: Send = senderFor(host.config)) {
    const counters: JobCounters = { alert_checks: 0, alert_checks_errored: 0, subscription_reports: 0, deliveries_ok: 0, deliveries_failed: 0 };
    this.ctx = { meta: host.meta, log: host.log, config: host.config, insights, send, counters, signal: this.closing.signal, now: () => Date.now() };
  }

  /** Nothing before the shards have replayed their logs: see `recovered`. */
  start(): void {}

  recovered(): void {
    if (this.host.index !== 0 || this.timer || this.closed) return;
    this.timer = setInterval(() => this.tick(), this.host.config.alertsTickMs);
    this.timer.unref();
    this.tick();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  stats(): Record<string, unknown> {
    return { ...this.ctx.counters };
  }

  private tick(): void {
    if (this.running || this.closed) return;
    this.running = this.runDue().catch((error: unknown) => {
      this.host.log.error({ event: 'notifications_failed', err: error }, `alerts and subscriptions: ${(error as Error)?.stack ?? error}`);
    }).finally(() => (this.running = null));
  }

  private async runDue(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      this.host.meta.env.resetReadTxn();
      const first = firstDue(this.host.meta);
      if (!first || first[0] > Date.now()) return;
      try {
        await this.run(first);
      } catch (error) {
        if (error instanceof Postponed) return;
        throw error;
      }
    }
  }

  private run(key: DueKey): Promise<void> {
    switch (key[2]) {
      case 'alert':
        return checkAlert(this.ctx, key);
      case 'subscription':
        return reportSubscription(this.ctx, key);
      default:
        return deliverOutbox(this.ctx, key);
    }
  }
}
