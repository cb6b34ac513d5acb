/**
 * The worker's end of the front's request port (see src/front/worker-pool.ts): decodes each request frame, runs
 * every request on its own, and posts the replies that finished in one tick together as one frame. A slow
 * request (an ingestion waiting for its fdatasync) therefore never holds back a fast one sent beside it.
 */
import type { MessagePort } from 'node:worker_threads';
import { Compile } from 'typebox/compile';
import { parseQuery } from '../http/query.js';
import { Errors } from '../protocol/errors.js';
import { WireItem, fromWire, replyToWire, type Reply, type ReplyFrame, type RequestFrame, type TaskItem } from '../protocol/worker-messages.js';
import { packFrame, unpack } from '../protocol/wire.js';
import { errorReply } from './reply.js';

const checkItem = Compile(WireItem);

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
     * Called for every frame with the number of requests in it (the apply loops yield to them under load, and take
     * their largest chunks only while requests are rare: a frame holds every request that arrived while this
     * thread was busy, so counting frames would see a load as rare exactly when a long chunk blocks it).
     */
    private readonly onFrame: (requests: number) => void = () => {},
    /** Where a malformed request (or an unsendable reply) is reported. */
    private readonly report: (message: string) => void = (m) => console.error(m),
  ) {
    port.on('message', (bytes: Uint8Array) => void this.receive(bytes));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.close();
    this.stopped();
  }

  private async receive(bytes: Uint8Array): Promise<void> {
    const frame = unpack<RequestFrame>(bytes);
    this.onFrame(Array.isArray(frame) ? frame.length / 2 : 1);
    if (this.checkFrames && !Array.isArray(frame)) {
      this.report(`malformed request frame from the front: not an array (${typeof frame})`);
      return;
    }
    await this.whenReady();
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
      this.run(item).then((reply) => this.answer(id, reply));
    }
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
