/**
 * The worker's end of the front's request port (see src/front/worker-pool.ts): decodes each request frame, runs
 * every request on its own, and posts the replies that finished in one tick together as one frame. A slow
 * request (an ingestion waiting for its fdatasync) therefore never holds back a fast one sent beside it.
 */
import type { MessagePort } from 'node:worker_threads';
import { Compile } from 'typebox/compile';
import { parseQuery } from '../http/query.js';
import { Errors } from '../protocol/errors.js';
import { RequestFrame, fromWire, replyToWire, type Reply, type ReplyFrame, type TaskItem, type WireItem } from '../protocol/worker-messages.js';
import { packFrame, unpack } from '../protocol/wire.js';
import { errorReply } from './reply.js';

const checkFrame = Compile(RequestFrame);

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
    private readonly checkFrames: boolean,
    /** Called for every frame of requests (the apply loops yield to them under load). */
    private readonly onFrame: () => void = () => {},
    private readonly log: (msg: string) => void = console.error,
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
    this.onFrame();
    const frame = unpack<RequestFrame>(bytes);
    if (this.checkFrames && !checkFrame.Check(frame)) throw new Error('malformed request frame from the front');
    await this.whenReady();
    for (let i = 0; i < frame.length; i += 2) {
      const id = frame[i] as number;
      let item: TaskItem;
      try {
        item = fromWire(frame[i + 1] as WireItem, parseQuery);
      } catch (error) {
        this.log(`request ${id}: unreadable item: ${(error as Error)?.stack ?? error}`);
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
      this.log(`reply to request ${id} cannot be sent: ${(error as Error)?.message ?? error}`);
      return replyToWire(errorReply(Errors.server()));
    });
    this.ready.length = 0;
    if (bytes) this.port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
  }
}
