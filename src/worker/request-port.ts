/**
 * The worker's end of the front's request port (see src/front/worker-pool.ts): decodes each request frame, runs
 * every request on its own, and posts the replies that finished in one tick together as one frame. A slow
 * request (an ingestion waiting for its fdatasync) therefore never holds back a fast one sent beside it.
 *
 * Ingestion requests wait behind the others: a frame's other requests (flag evaluation above all) start first,
 * and while such requests keep arriving the ingestion requests start afterwards in slices of BULK_SLICE_MS, each
 * slice its own turn of the event loop, so the requests of frames that arrive meanwhile start before the rest of
 * them (with ingestion alone they all start at once, as before). Under a saturating
 * ingestion a flag request thus no longer waits for every ingestion request the front sent before it. Ingestion
 * requests keep their order among themselves, and HTTP's order per connection is not at stake: uWS reads a
 * connection's next request only once the previous one is answered. A slice also ends as soon as the front has
 * posted a flag or API request that has not started yet (src/worker/waiting-requests.ts): it starts first.
 */
import type { MessagePort } from 'node:worker_threads';
import { Compile } from 'typebox/compile';
import { parseQuery } from '../http/query.js';
import { Errors } from '../protocol/errors.js';
import { WireItem, fromWire, isIngestion, replyToWire, type Reply, type ReplyFrame, type RequestFrame, type TaskItem } from '../protocol/worker-messages.js';
import { packFrame, unpack } from '../protocol/wire.js';
import { errorReply } from './reply.js';
import { requestsWaiting } from './waiting-requests.js';

const checkItem = Compile(WireItem);

/** How long a turn of the event loop may spend starting deferred ingestion requests. */
const BULK_SLICE_MS = 2;
/**
 * The longest an ingestion request is deferred: one that has waited this long starts in the next turn whatever the
 * slice. Without it, a thread whose turns are long (apply chunks on a large persons store, flags polled at a high
 * rate) started 2 ms of ingestion per turn while more arrived, and acknowledgements waited tens of seconds (seen in
 * the bench's time-to-visible case right after the sustained case).
 */
const MAX_DEFER_MS = 20;

/** Why one (id, item) pair of a request frame does not follow the protocol, or null when it does. */
export function malformation(id: unknown, item: unknown): string | null {
  if (!Number.isInteger(id)) return `request id ${JSON.stringify(id)} is not an integer`;
  if (checkItem.Check(item)) return null;
  const first = [...checkItem.Errors(item)][0];
  return `item ${first?.instancePath || '/'} ${first?.message ?? 'does not match the schema'}`;
}

export class RequestPort {
  private readonly ready: ReplyFrame = [];
  private flushScheduled = false;
  /** Ingestion requests not started yet, in arrival order: id, item, id, item, ... */
  /** Deferred ingestion requests as (id, item, arrival time) triples, from `bulkHead` on. */
  private readonly bulk: (number | TaskItem)[] = [];
  private bulkHead = 0;
  private bulkScheduled = false;
  private closed = false;
  private stopped!: () => void;
  /** Resolves when the port is closed (shutdown). */
  readonly done = new Promise<void>((resolve) => (this.stopped = resolve));

  constructor(
    private readonly port: MessagePort,
    private readonly run: (item: TaskItem) => Promise<Reply>,
    /** Resolves once the worker can serve requests (its shards are open). */
    private readonly whenReady: () => Promise<void>,
    /** Check every request against the protocol schema (QUILL_LOG_LEVEL=debug). */
    private readonly checkFrames: boolean,
    /**
     * Called for every frame with the number of requests in it and how many of them are not ingestion (the apply
     * loops yield to requests under load, run their shortest chunks while flag or API requests arrive, and take
     * their largest chunks only while requests are rare: a frame holds every request that arrived while this
     * thread was busy, so counting frames would see a load as rare exactly when a long chunk blocks it).
     */
    private readonly onFrame: (requests: number, interactive: number) => void = () => {},
    /** Where a malformed request (or an unsendable reply) is reported. */
    private readonly report: (message: string) => void = (m) => console.error(m),
    /**
     * Whether ingestion requests should start in slices (other requests are arriving); when not, they start at
     * once after the frame's other requests, as acknowledgements are all the thread has to answer.
     */
    private readonly sliceIngestion: () => boolean = () => true,
  ) {
    port.on('message', (bytes: Uint8Array) => void this.receive(bytes));
  }

  private ignoring = false;

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.close();
    this.stopped();
  }

  /**
   * Stops running requests but keeps the port open (the thread is about to die: src/worker/fatal-exit.ts). Closing
   * it would end the serve task as a normal stop; left open, the front fails the requests still waiting when the
   * thread dies, and reconnects to its replacement.
   */
  ignoreRequests(): void {
    this.ignoring = true;
  }

  private async receive(bytes: Uint8Array): Promise<void> {
    if (this.ignoring) return;
    const frame = unpack<RequestFrame>(bytes);
    if (this.checkFrames && !Array.isArray(frame)) {
      this.report(`malformed request frame from the front: not an array (${typeof frame})`);
      return;
    }
    await this.whenReady();
    let interactive = 0;
    for (let i = 0; i < frame.length; i += 2) {
      const id = frame[i] as number;
      if (this.checkFrames) {
        // A front/worker protocol mismatch is a bug: name it, and answer 500 rather than run a garbled request
        // (or leave the front waiting for an answer that never comes).
        const problem = malformation(id, frame[i + 1]);
        if (problem) {
          this.report(`malformed request from the front (frame position ${i}): ${problem}`);
          if (Number.isInteger(id)) this.answer(id, errorReply(Errors.server()));
          continue;
        }
      }
      let item: TaskItem;
      try {
        item = fromWire(frame[i + 1] as WireItem, parseQuery);
      } catch (error) {
        this.report(`request ${id}: unreadable item: ${(error as Error)?.stack ?? error}`);
        this.answer(id, errorReply(Errors.server()));
        continue;
      }
      if (isIngestion(item.op)) this.bulk.push(id, item, performance.now());
      else {
        interactive++;
        this.start(id, item);
      }
    }
    this.onFrame(frame.length / 2, interactive);
    if (this.sliceIngestion()) this.scheduleBulk();
    else this.startBulk(Infinity);
  }

  private start(id: number, item: TaskItem): void {
    this.run(item).then((reply) => this.answer(id, reply));
  }

  private scheduleBulk(): void {
    if (this.bulkScheduled || this.bulkHead === this.bulk.length) return;
    this.bulkScheduled = true;
    setImmediate(() => this.startBulk());
  }

  /** Starts deferred ingestion requests for up to `sliceMs`; the rest wait for the next turn. */
  private startBulk(sliceMs = BULK_SLICE_MS): void {
    this.bulkScheduled = false;
    if (this.closed || this.bulkHead === this.bulk.length) return;
    const now = performance.now();
    const until = now + sliceMs;
    const overdue = now - MAX_DEFER_MS;
    do {
      const id = this.bulk[this.bulkHead++] as number;
      const item = this.bulk[this.bulkHead++] as TaskItem;
      this.bulkHead++; // arrival time
      this.start(id, item);
    } while (this.bulkHead < this.bulk.length && ((performance.now() < until && !requestsWaiting()) || (this.bulk[this.bulkHead + 2] as number) <= overdue));
    if (this.bulkHead === this.bulk.length || this.bulkHead > 6144) {
      this.bulk.splice(0, this.bulkHead);
      this.bulkHead = 0;
    }
    this.scheduleBulk();
  }

  private answer(id: number, reply: Reply): void {
    this.ready.push(id, replyToWire(reply));
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed || this.ready.length === 0) return;
    // A reply that does not pack (none should: bodies are strings or bytes) becomes a 500 for its request alone.
    const bytes = packFrame(this.ready, (id, error) => {
      this.report(`reply to request ${id} cannot be sent: ${(error as Error)?.message ?? error}`);
      return replyToWire(errorReply(Errors.server()));
    });
    this.ready.length = 0;
    if (bytes) this.port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
  }
}
