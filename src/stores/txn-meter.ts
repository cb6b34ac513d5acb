/**
 * How large the LMDB write transactions of this thread are. lmdb-js runs every `transaction()` callback queued
 * while a commit is in progress in the next write transaction, so one LMDB transaction can carry many callbacks
 * (many apply chunks, person writes of API requests, re-sent parts), and LMDB's dirty-page list costs more per
 * page as it grows: the worker-crash soak's stalls were one transaction whose callbacks took seconds each.
 * lmdb-js does not expose dirty pages; what it does expose is the transaction a callback runs in (its write
 * transaction object, and LMDB's id for the logs), so the meter counts callbacks and their JavaScript time per
 * transaction, per environment, and `/metrics` shows their distributions (src/worker/metrics.ts). Since the write
 * lane (src/stores/write-lane.ts) no transaction carries more than 8 callbacks.
 */

/** Callbacks per transaction: bucket upper bounds. */
export const CALLBACK_BOUNDS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024];
/** JavaScript time per transaction, seconds. */
export const SECONDS_BOUNDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];

export interface TxnSummary {
  callbackCounts: number[];
  callbackSum: number;
  secondsCounts: number[];
  secondsSum: number;
  /** The largest transaction seen: callbacks and seconds. */
  maxCallbacks: number;
  maxSeconds: number;
}

function bucketOf(bounds: readonly number[], value: number): number {
  let i = 0;
  while (i < bounds.length && value > bounds[i]!) i++;
  return i;
}

/**
 * Told when the open transaction passes a threshold (its callbacks reach 64, 128, 256…, or its JavaScript time 1 s,
 * 2 s, 4 s…): a transaction that grows without end never closes, so only this reports it while it happens — in the
 * thread's log, which a stall leaves readable (the worker-crash soak prints the server's last lines).
 */
export type TxnWarning = (label: string, txnId: number, callbacks: number, seconds: number) => void;
let warning: TxnWarning | null = null;

export function onLargeTransaction(warn: TxnWarning): void {
  warning = warn;
}

export class TxnMeter {
  private txn: object | null = null;
  private callbacks = 0;
  private seconds = 0;
  private nextCallbacksWarning = 64;
  private nextSecondsWarning = 1;

  constructor(private readonly label = '') {}
  readonly summary: TxnSummary = {
    callbackCounts: new Array<number>(CALLBACK_BOUNDS.length + 1).fill(0),
    callbackSum: 0,
    secondsCounts: new Array<number>(SECONDS_BOUNDS.length + 1).fill(0),
    secondsSum: 0,
    maxCallbacks: 0,
    maxSeconds: 0,
  };

  /** One callback ran in write transaction `txn` (LMDB's id `txnId`) for `seconds`; a new one closes the previous. */
  note(txn: object, txnId: number, seconds: number): void {
    if (txn !== this.txn) {
      this.close();
      this.txn = txn;
    }
    this.callbacks++;
    this.seconds += seconds;
    if (this.callbacks >= this.nextCallbacksWarning || this.seconds >= this.nextSecondsWarning) {
      warning?.(this.label, txnId, this.callbacks, this.seconds);
      while (this.callbacks >= this.nextCallbacksWarning) this.nextCallbacksWarning *= 2;
      while (this.seconds >= this.nextSecondsWarning) this.nextSecondsWarning *= 2;
    }
  }

  /** Folds the open transaction into the summary (also called when reading, so the last one counts). */
  close(): void {
    if (this.callbacks === 0) return;
    const s = this.summary;
    s.callbackCounts[bucketOf(CALLBACK_BOUNDS, this.callbacks)]!++;
    s.callbackSum += this.callbacks;
    s.secondsCounts[bucketOf(SECONDS_BOUNDS, this.seconds)]!++;
    s.secondsSum += this.seconds;
    s.maxCallbacks = Math.max(s.maxCallbacks, this.callbacks);
    s.maxSeconds = Math.max(s.maxSeconds, this.seconds);
    this.callbacks = 0;
    this.seconds = 0;
    this.txn = null;
    this.nextCallbacksWarning = 64;
    this.nextSecondsWarning = 1;
  }
}

/** This thread's meters, by environment label (`persons`, `meta`, `events`). */
export const txnMeters = new Map<string, TxnMeter>();

export function meterFor(label: string): TxnMeter {
  let m = txnMeters.get(label);
  if (!m) txnMeters.set(label, (m = new TxnMeter(label)));
  return m;
}
