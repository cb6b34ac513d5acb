/**
 * This worker's heartbeat for the front's watchdog (src/front/watchdog.ts): every BEAT_MS the thread writes, in
 * memory shared with the front, that its event loop turned now and since when its oldest unfinished request has
 * run. A thread held by synchronous work (a pattern, a huge transaction) cannot answer any message, so the front
 * learns it from the heartbeat's age alone.
 */
import type { SharedState } from '../protocol/shared-state.js';

export const BEAT_MS = 250;

export class Heartbeat {
  /** Unfinished requests and when each began (epoch ms). */
  private readonly running = new Map<object, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly shared: SharedState,
    private readonly worker: number,
  ) {
    this.beat();
    this.timer = setInterval(() => this.beat(), BEAT_MS);
    this.timer.unref();
  }

  begin(request: object): void {
    this.running.set(request, Date.now());
  }

  end(request: object): void {
    this.running.delete(request);
  }

  close(): void {
    clearInterval(this.timer);
  }

  private beat(): void {
    let oldest = 0;
    for (const at of this.running.values()) if (oldest === 0 || at < oldest) oldest = at;
    this.shared.beat(this.worker, Date.now(), oldest);
  }
}
