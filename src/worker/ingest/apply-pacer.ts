/**
 * How much of a worker's time its apply loops may take, so that a burst of ingestion is acknowledged at the rate
 * of the acknowledgement path (log, fdatasync, hand-over) while persons and events are applied with what CPU is
 * left — as PostHog acknowledges into Kafka and processes behind it. Acknowledged events wait in the ingest logs
 * on disk, so the backlog costs no memory.
 *
 * The apply runs freely unless the machine is saturated: requests arrived in the last BUSY_WINDOW_MS and less
 * than IDLE_THRESHOLD of the CPUs was idle over the last sample. Then it runs in short slices and pauses between
 * them so that it takes a share of this thread's time that grows with the age of the oldest waiting event:
 * MIN_SHARE at once, all of it at FULL_SHARE_LAG_MS. A sustained overload therefore ends with the apply at full
 * speed and acknowledgements slowed to match (and the backlog bound in shard.ts stops admissions before the disk
 * fills); a burst is absorbed. A read-your-writes wait (the API) never pauses.
 *
 * Measured with `npm run bench` (/batch/, 32 connections, 2 workers): see bench/README.md.
 */
import { cpus } from 'node:os';

const BUSY_WINDOW_MS = 20;
const IDLE_THRESHOLD = 0.2;
const SAMPLE_MS = 200;
/**
 * Fresh persons, events and flag person properties matter more than the last requests per second of a saturating
 * burst (the user's decision): the apply keeps at least half of its thread, and all of it once the oldest waiting
 * event is FULL_SHARE_LAG_MS old.
 */
const MIN_SHARE = 0.5;
const FULL_SHARE_LAG_MS = 10_000;
/**
 * Requests are counted in rolling windows of WINDOW_MS (the current one and the one before it), for two decisions
 * of the apply loop (src/worker/ingest/shard.ts):
 *  - `interactive`: requests other than ingestion (flag evaluations, API calls) arrive at INTERACTIVE_MIN or more
 *    per two windows. The apply then keeps its transactions short: each such request waits for the slice of apply
 *    running when it arrives, however much CPU the apply is given. Short slices cost apply throughput, so a trickle
 *    (a dashboard, a stats poll every 100 ms) does not count.
 *  - `quiet`: fewer than QUIET_MAX_REQUESTS requests of any kind over two windows. Only then does the apply take
 *    its catch-up chunks, which block the worker for up to a second. A stream of requests (an ingestion load, even
 *    one with gaps of tens of ms on a saturated machine) then never waits behind one, while a monitoring poll does
 *    not hold the catch-up back. Measured with `npm run bench:million`: gated by `busy` alone (no request in the
 *    last 20 ms), catch-up chunks slipped into the gaps of the load on a saturated machine and the
 *    acknowledgements' p99 went from 0.35 s to 1.3 s; counting frames rather than requests let a chunk that blocked
 *    the thread make the load look rare (the requests of that time arrive as one frame), p99 0.44 → 0.86 s in the
 *    sustained case.
 */
const WINDOW_MS = 250;
const INTERACTIVE_MIN = 25;
const QUIET_MAX_REQUESTS = 8;

export class ApplyPacer {
  private lastRequestAt = -Infinity;
  /** When the current window began; requests of any kind and requests other than ingestion in it and the one before. */
  private windowStart = -Infinity;
  private requestsNow = 0;
  private requestsBefore = 0;
  private interactiveNow = 0;
  private interactiveBefore = 0;
  private idle = 1;
  private previous = cpuTimes();
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  /** A frame of `requests` requests reached this worker, `interactive` of them not ingestion. */
  noteRequest(requests = 1, interactive = 0): void {
    const now = performance.now();
    this.lastRequestAt = now;
    this.roll(now);
    this.requestsNow += requests;
    this.interactiveNow += interactive;
  }

  /** Whether requests other than ingestion are arriving at a rate: the apply then runs in its shortest slices. */
  get interactive(): boolean {
    this.roll(performance.now());
    return this.interactiveNow + this.interactiveBefore >= INTERACTIVE_MIN;
  }

  /** Whether requests are rare enough lately for a catch-up chunk. */
  get quiet(): boolean {
    this.roll(performance.now());
    return this.requestsBefore + this.requestsNow < QUIET_MAX_REQUESTS;
  }

  private roll(now: number): void {
    const elapsed = now - this.windowStart;
    if (elapsed < WINDOW_MS) return;
    // A window with no request at all in between forgets the older one too.
    const adjacent = elapsed < 2 * WINDOW_MS;
    this.requestsBefore = adjacent ? this.requestsNow : 0;
    this.interactiveBefore = adjacent ? this.interactiveNow : 0;
    this.requestsNow = 0;
    this.interactiveNow = 0;
    this.windowStart = now;
  }

  /** Whether requests are arriving: the apply then runs in short chunks (each blocks them while it runs). */
  get busy(): boolean {
    return performance.now() - this.lastRequestAt < BUSY_WINDOW_MS;
  }

  /** Whether acknowledgements are competing with the apply for CPU right now. */
  get contended(): boolean {
    return this.idle < IDLE_THRESHOLD && this.busy;
  }

  /** How long to pause after a slice of apply that took `sliceMs`, when the oldest waiting event is `lagMs` old. */
  pauseAfter(sliceMs: number, lagMs: number): number {
    return this.contended ? pauseForShare(sliceMs, lagMs) : 0;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    const now = cpuTimes();
    const total = now.total - this.previous.total;
    if (total > 0) this.idle = (now.idle - this.previous.idle) / total;
    this.previous = now;
  }
}

/**
 * Under contention: the pause after a slice of `sliceMs` that leaves the apply its share of the thread's time,
 * MIN_SHARE growing linearly to all of it when the oldest waiting event is FULL_SHARE_LAG_MS old.
 */
export function pauseForShare(sliceMs: number, lagMs: number): number {
  const share = MIN_SHARE + ((1 - MIN_SHARE) * Math.max(0, lagMs)) / FULL_SHARE_LAG_MS;
  return share >= 1 ? 0 : sliceMs * (1 / share - 1);
}

function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const { times } of cpus()) {
    idle += times.idle;
    total += times.idle + times.user + times.nice + times.sys + times.irq;
  }
  return { idle, total };
}
