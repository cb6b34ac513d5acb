/**
 * The retry loop every exporter runs: one step exports one batch (or finds nothing to do); a failed step is retried
 * with the same batch after a growing pause (ClickHouse down or slow), and the failure is logged once per outage.
 */
import type { Logger } from '../../observability/logger.js';
import { failureText } from '../../stores/clickhouse/sink.js';

const IDLE_MS = 200;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 10_000;
/**
 * How long a stop waits for the step in flight (an insert may wait up to the client's request timeout). A step
 * abandoned there is redone at the next start: its range is stored and the checkpoint moves only after the insert.
 */
const STOP_WAIT_MS = 2_000;

export interface ExportLoopStats {
  batches: number;
  rows: number;
  failures: number;
  /** The last failure's text while failing; null once a batch went through. */
  error: string | null;
}

export class ExportLoop {
  readonly stats: ExportLoopStats = { batches: 0, rows: 0, failures: 0, error: null };
  private running = false;
  private stopped = false;
  private wake: (() => void) | null = null;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly name: string,
    private readonly log: Logger,
    /** Exports one batch; resolves with the rows it exported, or null when there was nothing to export yet. */
    private readonly step: () => Promise<number | null>,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.done = this.run();
  }

  /** Stops after the step in flight (a batch cut and not inserted is redone from its stored range at the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await Promise.race([this.done, new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
  }

  private async run(): Promise<void> {
    let backoff = FIRST_BACKOFF_MS;
    while (!this.stopped) {
      try {
        const rows = await this.step();
        if (this.stats.error !== null) this.log.info({ event: 'export_resumed', exporter: this.name }, `${this.name}: export resumed`);
        this.stats.error = null;
        backoff = FIRST_BACKOFF_MS;
        if (rows === null) await this.pause(IDLE_MS);
        else {
          this.stats.batches++;
          this.stats.rows += rows;
        }
      } catch (error) {
        this.stats.failures++;
        const text = failureText(error);
        if (this.stats.error === null) {
          this.log.warn({ event: 'export_failing', exporter: this.name, error: text }, `${this.name}: export failed, retrying the same batch: ${text}`);
        }
        this.stats.error = text;
        await this.pause(backoff);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }
}
