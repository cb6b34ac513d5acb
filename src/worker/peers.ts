/**
 * Worker-to-worker calls (forwarding events to the shard that owns them, scatter/gather queries, replication of
 * flag changes). Each worker listens on a named BroadcastChannel `quill-peer-<index>`; a sender opens the channel
 * of the target by name. Named channels, unlike transferred MessagePorts, survive Piscina replacing a crashed
 * thread: the new thread simply opens its inbox again.
 */
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { AnalyticsInputError } from '../domain/analytics/errors.js';
import { currentBudget, QueriesAbandonedError, QueryCancelledError, QueryMemoryError, QueryTimeoutError, withBudget, type QueryBudget } from './query-budget.js';

export type PeerMessage = { kind: string; [k: string]: unknown };
type Envelope =
  /** `budget`: the caller's request budget (src/worker/query-budget.ts); the call runs under it here too. */
  | { call: number; from: number; msg: PeerMessage; budget?: QueryBudget }
  | { reply: number; ok: true; value: unknown }
  | { reply: number; ok: false; error: string; answer?: AnswerableError }
  | { restarted: number };

/**
 * Errors that a request answers with (400, 504…) rather than a 500, in a form that crosses threads: a scan that
 * stops at its deadline or on a bad pattern on another worker must answer the same as on the coordinator.
 */
type AnswerableError =
  | { kind: 'input'; attr: string | null; code: string; detail: string }
  | { kind: 'timeout'; timeoutS: number }
  | { kind: 'memory'; limitMb: number }
  | { kind: 'abandoned' }
  | { kind: 'cancelled' };

function answerableOf(error: unknown): AnswerableError | undefined {
  if (error instanceof AnalyticsInputError) return { kind: 'input', attr: error.attr, code: error.code, detail: error.message };
  if (error instanceof QueryTimeoutError) return { kind: 'timeout', timeoutS: error.timeoutS };
  if (error instanceof QueryMemoryError) return { kind: 'memory', limitMb: error.limitMb };
  if (error instanceof QueriesAbandonedError) return { kind: 'abandoned' };
  if (error instanceof QueryCancelledError) return { kind: 'cancelled' };
  return undefined;
}

function revive(answer: AnswerableError): Error {
  switch (answer.kind) {
    case 'input':
      return new AnalyticsInputError(answer.attr, answer.detail, answer.code);
    case 'timeout':
      return new QueryTimeoutError(answer.timeoutS);
    case 'memory':
      return new QueryMemoryError(answer.limitMb);
    case 'abandoned':
      return new QueriesAbandonedError();
    case 'cancelled':
      return new QueryCancelledError();
  }
}

const CALL_TIMEOUT_MS = 60_000;

export class Peers {
  private readonly inbox: BroadcastChannel;
  private readonly outboxes = new Map<number, BroadcastChannel>();
  private readonly waiting = new Map<number, { target: number; msg: PeerMessage; budget: QueryBudget | undefined; resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  /**
   * Call ids are unique per thread, not only per worker: a peer may answer a call of a thread that died after its
   * replacement started, and with ids counted from 1 in every thread that late answer resolved the replacement's
   * own call of the same number (a re-send reported done before it had begun: acknowledged events were lost when
   * a worker crashed again while recovering, test/e2e/worker-crash-soak.test.ts). Thread ids never repeat.
   */
  private nextCall = threadId * 2 ** 32 + 1;

  constructor(
    readonly index: number,
    readonly count: number,
    private readonly handle: (msg: PeerMessage, from: number) => Promise<unknown>,
  ) {
    this.inbox = new BroadcastChannel(channelName(index));
    this.inbox.onmessage = (event) => this.receive((event as MessageEvent).data as Envelope);
  }

  /** Calls worker `target` (which may be this worker: then it runs locally, without a hop). */
  call<T = unknown>(target: number, msg: PeerMessage, timeoutMs = CALL_TIMEOUT_MS): Promise<T> {
    if (target === this.index) return this.handle(msg, this.index) as Promise<T>;
    const id = this.nextCall++;
    const budget = currentBudget();
    // A call made for a request with a longer budget than the usual call timeout waits for that budget (plus the
    // time for the peer's own budget error to come back).
    if (budget !== undefined) timeoutMs = Math.max(timeoutMs, budget.deadline - Date.now() + 5_000);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`peer ${target} did not answer ${msg.kind} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, { target, msg, budget, resolve: resolve as (v: unknown) => void, reject, timer });
      this.outbox(target).postMessage({ call: id, from: this.index, msg, budget } satisfies Envelope);
    });
  }

  /** Calls every worker including this one; resolves with the answers in worker order. */
  all<T = unknown>(msg: PeerMessage): Promise<T[]> {
    return Promise.all(Array.from({ length: this.count }, (_, i) => this.call<T>(i, msg)));
  }

  /** Calls every other worker. */
  others<T = unknown>(msg: PeerMessage): Promise<T[]> {
    const calls: Promise<T>[] = [];
    for (let i = 0; i < this.count; i++) if (i !== this.index) calls.push(this.call<T>(i, msg));
    return Promise.all(calls);
  }

  /**
   * Called by a thread that replaces one that died: calls the dead thread received but never answered are sent
   * again to this one. Safe because every peer message is idempotent (appends are deduplicated by uuid when
   * applied; the others read or reload).
   */
  announceRestart(): void {
    for (let i = 0; i < this.count; i++) if (i !== this.index) this.outbox(i).postMessage({ restarted: this.index } satisfies Envelope);
  }

  private closed = false;

  close(): void {
    this.closed = true;
    this.inbox.close();
    for (const ch of this.outboxes.values()) ch.close();
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer);
      w.reject(new Error('worker shutting down'));
    }
  }

  private outbox(target: number): BroadcastChannel {
    let ch = this.outboxes.get(target);
    if (!ch) {
      ch = new BroadcastChannel(channelName(target));
      // Outboxes share the target's name, so they would also receive its traffic; they must not keep it queued.
      ch.onmessage = () => undefined;
      ch.unref();
      this.outboxes.set(target, ch);
    }
    return ch;
  }

  private receive(env: Envelope): void {
    if ('restarted' in env) {
      for (const [id, w] of this.waiting) {
        if (w.target === env.restarted) this.outbox(w.target).postMessage({ call: id, from: this.index, msg: w.msg, budget: w.budget } satisfies Envelope);
      }
      return;
    }
    if ('call' in env) {
      const back = this.outbox(env.from);
      // A call answered after this thread closed its channels (it is dying) goes unanswered: the caller re-sends it
      // to the replacement thread when that announces itself.
      const answer = (reply: Envelope) => {
        if (!this.closed) back.postMessage(reply);
      };
      withBudget(env.budget, () => this.handle(env.msg, env.from)).then(
        (value) => answer({ reply: env.call, ok: true, value }),
        (error: unknown) => answer({ reply: env.call, ok: false, error: String((error as Error)?.stack ?? error), answer: answerableOf(error) }),
      );
      return;
    }
    const w = this.waiting.get(env.reply);
    if (!w) return;
    this.waiting.delete(env.reply);
    clearTimeout(w.timer);
    if (env.ok) w.resolve(env.value);
    else w.reject(env.answer ? revive(env.answer) : new Error(env.error));
  }
}

function channelName(index: number): string {
  return `quill-peer-${index}`;
}
