/**
 * `GET /flags/stream`: flag changes pushed to clients as Server-Sent Events, so SDKs reload definitions when they
 * change instead of polling.
 *
 * How the front learns of a change: a worker that changed a project's flags, cohorts or group types replicates the
 * change to every worker before the API answers (src/worker/replication.ts) and then bumps the project's slot in
 * shared memory (src/protocol/shared-state.ts `flagsChanged`). While at least one stream is open, the front reads
 * the slots of the projects that have streams every POLL_MS; when one moved, it asks a worker (a control task) for
 * the project's definitions version (the ETag of /flags/definitions) and a digest per flag, and names the keys
 * whose digest changed. Why this and not a message from the worker: the flag write path does one atomic add and
 * never waits for, or even knows about, the front's streams; several changes within one poll coalesce into one
 * event; and with no stream open nothing runs at all (no timer, no message). The cost is up to POLL_MS of delay.
 * Evaluation (/flags/, /decide/) is untouched: it neither reads nor writes anything here.
 *
 * Events (`id` is `<front start>-<sequence>`, per project; the sequence restarts with the front, the start tag
 * tells a reconnecting client's id from another run's):
 *  - server stream (personal API key with feature_flag:read, project by `?token=`):
 *    `version` on connect `{"version"}`; `change` `{"version","keys"}` per change; `reset` `{"version"}` when a
 *    `Last-Event-ID` cannot be resumed (reload the definitions);
 *  - browser stream (no Authorization; the project API key as `?token=`): `changed` `{}` and nothing else.
 * A `Last-Event-ID` still in the project's ring (the last RING_SIZE changes) gets exactly the events after it.
 * Heartbeat: the comment `: ping` every HEARTBEAT_MS. A client that stops reading is dropped (it reconnects and
 * resumes with its Last-Event-ID) once MAX_BUFFERED_BYTES wait for it or it stayed blocked for SLOW_DROP_MS.
 * A change or a heartbeat reaches the streams in slices of SLICE_MS of the front's time (`SlicedSender`): one write
 * is a system call, so 10,000 streams cost the front tens of milliseconds, which in one piece would hold every
 * `/flags/` request the front is parsing meanwhile.
 */
import type { SharedState } from '../protocol/shared-state.js';

export const POLL_MS = 25;
export const HEARTBEAT_MS = 15_000;
export const RING_SIZE = 256;
/** A project without streams keeps its ring this long, so clients reconnecting after a blip resume exactly. */
export const IDLE_FEED_MS = 10 * 60_000;
const MAX_BUFFERED_BYTES = 64 * 1024;
const SLOW_DROP_MS = 30_000;
/** Front time one slice of a fan-out may take before requests get their turn. */
export const SLICE_MS = 2;

export const SSE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  // Proxies such as nginx buffer responses unless told not to.
  'X-Accel-Buffering': 'no',
};

/** Where a stream's bytes go (src/http/exchange.ts in the server; a fake in unit tests). */
export interface StreamSink {
  write(chunk: string): 'sent' | 'buffered' | 'gone';
  whenWritable(drained: () => void): void;
  end(drop: boolean): void;
  /** Calls `left` when the client goes away. */
  onClose(left: () => void): void;
}

export interface FlagState {
  version: string;
  flags: Record<string, string>;
}

export type StreamKind = 'server' | 'browser';

interface ChangeEvent {
  seq: number;
  version: string;
  keys: string[];
}

function frame(id: string, event: string | null, data: unknown): string {
  return `id: ${id}\n${event ? `event: ${event}\n` : ''}${data === undefined ? '' : `data: ${JSON.stringify(data)}\n`}\n`;
}

class Stream {
  private congestedSince = 0;
  private congestedBytes = 0;
  closed = false;

  constructor(readonly kind: StreamKind, private readonly sink: StreamSink, readonly feed: Feed) {
    sink.onClose(() => this.gone());
  }

  send(chunk: string, now: number): void {
    if (this.closed) return;
    if (this.congestedSince > 0) {
      this.congestedBytes += chunk.length;
      if (this.congestedBytes > MAX_BUFFERED_BYTES) return this.drop();
    }
    const result = this.sink.write(chunk);
    if (result === 'gone') return this.gone();
    if (result === 'buffered' && this.congestedSince === 0) {
      this.congestedSince = now;
      this.congestedBytes = chunk.length;
      this.sink.whenWritable(() => {
        this.congestedSince = 0;
        this.congestedBytes = 0;
      });
    }
  }

  /** The heartbeat: skipped while the client is behind; a client behind for too long is dropped. */
  ping(now: number): void {
    if (this.congestedSince > 0) {
      if (now - this.congestedSince > SLOW_DROP_MS) this.drop();
      return;
    }
    this.send(': ping\n\n', now);
  }

  private drop(): void {
    this.sink.end(true);
    this.gone();
  }

  end(): void {
    if (this.closed) return;
    this.sink.end(false);
    this.gone();
  }

  /** The client left (or was dropped): forget the stream. */
  gone(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed.detach(this);
  }
}

/** One project's change history and its open streams. */
class Feed {
  version: string | null = null;
  private flags: Record<string, string> = {};
  seq = 0;
  readonly ring: ChangeEvent[] = [];
  readonly streams = new Set<Stream>();
  /** Connections between authorization and their first event: they keep the feed alive. */
  connecting = 0;
  /** The flag slot's value read before the last state fetch. */
  slotSeen: number;
  idleSince = 0;
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  /** Fetches queued or running. */
  private fetches = 0;

  constructor(readonly projectId: number, private readonly owner: FlagStreams) {
    this.slotSeen = owner.shared.flagsVersion(projectId);
  }

  idFor(seq: number): string {
    return `${this.owner.epoch}-${seq}`;
  }

  /**
   * Brings the feed up to date with the workers: resolves once a state fetched after this call began is applied.
   * Fetches run one at a time per project (so states apply in order); callers arriving while one is queued share it.
   */
  refresh(): Promise<void> {
    if (this.queued) return this.queued;
    this.fetches++;
    const run = this.chain.then(async () => {
      this.queued = null;
      try {
        const slot = this.owner.shared.flagsVersion(this.projectId);
        const state = await this.owner.fetchState(this.projectId);
        this.slotSeen = slot;
        if (state) this.apply(state, Date.now());
      } finally {
        this.fetches--;
      }
    });
    this.queued = run;
    this.chain = run.catch(() => undefined);
    return run;
  }

  get refreshing(): boolean {
    return this.fetches > 0;
  }

  private apply(state: FlagState, now: number): void {
    if (this.version === null) {
      this.version = state.version;
      this.flags = state.flags;
      return;
    }
    if (state.version === this.version) return;
    const keys = new Set<string>();
    for (const [key, digest] of Object.entries(state.flags)) if (this.flags[key] !== digest) keys.add(key);
    for (const key of Object.keys(this.flags)) if (!(key in state.flags)) keys.add(key);
    this.version = state.version;
    this.flags = state.flags;
    const event: ChangeEvent = { seq: ++this.seq, version: state.version, keys: [...keys].sort() };
    this.ring.push(event);
    if (this.ring.length > RING_SIZE) this.ring.shift();
    const id = this.idFor(event.seq);
    const serverFrame = frame(id, 'change', { version: event.version, keys: event.keys });
    const browserFrame = frame(id, 'changed', {});
    // The streams open now: one that joins during the fan-out had this change in its opening chunk.
    this.owner.sender.push([...this.streams], (stream) => stream.send(stream.kind === 'server' ? serverFrame : browserFrame, now));
  }

  /** What a client connecting now is sent first, given the `Last-Event-ID` it sent ('' if none). */
  opening(kind: StreamKind, lastEventId: string): string {
    const current = this.idFor(this.seq);
    const asked = this.resumeFrom(lastEventId);
    if (kind === 'browser') {
      // An id-only frame sets the browser's last event id without dispatching an event.
      return lastEventId === '' || asked === this.seq ? `id: ${current}\n\n` : frame(current, 'changed', {});
    }
    if (lastEventId === '') return frame(current, 'version', { version: this.version });
    if (asked === null) return frame(current, 'reset', { version: this.version });
    let out = '';
    for (const e of this.ring) if (e.seq > asked) out += frame(this.idFor(e.seq), 'change', { version: e.version, keys: e.keys });
    return out;
  }

  /** The sequence a Last-Event-ID resumes from, or null when the events after it are not all in the ring. */
  private resumeFrom(lastEventId: string): number | null {
    const m = /^([0-9a-z]+)-(\d+)$/.exec(lastEventId.trim());
    if (!m || m[1] !== this.owner.epoch) return null;
    const seq = Number(m[2]);
    if (seq > this.seq) return null;
    const oldest = this.ring.length > 0 ? this.ring[0]!.seq : this.seq + 1;
    return seq >= oldest - 1 ? seq : null;
  }

  attach(stream: Stream): void {
    this.streams.add(stream);
    this.owner.streamsChanged(1);
  }

  detach(stream: Stream): void {
    if (!this.streams.delete(stream)) return;
    if (this.streams.size === 0) this.idleSince = Date.now();
    this.owner.streamsChanged(-1);
  }
}

/**
 * Runs an action on many streams in slices of at most SLICE_MS, with a turn of the event loop between slices, in
 * the order the fan-outs were pushed (so every stream gets its events in order). The first slice runs at once.
 */
export class SlicedSender<T> {
  private readonly queue: { targets: T[]; next: number; act: (target: T) => void }[] = [];
  private scheduled = false;

  push(targets: T[], act: (target: T) => void): void {
    if (targets.length === 0) return;
    this.queue.push({ targets, next: 0, act });
    if (!this.scheduled) this.run();
  }

  get pending(): number {
    return this.queue.length;
  }

  private readonly run = (): void => {
    this.scheduled = false;
    const until = performance.now() + SLICE_MS;
    let done = 0;
    while (this.queue.length > 0) {
      const job = this.queue[0]!;
      while (job.next < job.targets.length) {
        job.act(job.targets[job.next++]!);
        // Reading the clock costs more than a write's bookkeeping: look every 32 streams.
        if (++done % 32 === 0 && performance.now() >= until) {
          this.scheduled = true;
          setImmediate(this.run);
          return;
        }
      }
      this.queue.shift();
    }
  };
}

export class FlagStreams {
  /** Tells this run's event ids from another's (the sequences restart with the front). */
  readonly epoch = Date.now().toString(36);
  readonly sender = new SlicedSender<Stream>();
  private readonly feeds = new Map<number, Feed>();
  private open = 0;
  private poller: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    readonly shared: SharedState,
    /** The project's state from a worker (null: the project is gone). */
    readonly fetchState: (projectId: number) => Promise<FlagState | null>,
    private readonly log: (error: unknown) => void = () => undefined,
  ) {}

  get openStreams(): number {
    return this.open;
  }

  /**
   * Registers a connection about to stream `projectId`: brings the project's feed up to date, then `start` is given
   * the opening chunk and must return the sink (null: the client left meanwhile).
   */
  async connect(projectId: number, kind: StreamKind, lastEventId: string, start: (opening: string) => StreamSink | null): Promise<void> {
    let feed = this.feeds.get(projectId);
    if (!feed) this.feeds.set(projectId, (feed = new Feed(projectId, this)));
    feed.connecting++;
    try {
      await feed.refresh();
    } finally {
      feed.connecting--;
    }
    // Synchronously from here: no change can slip between the opening chunk and the stream joining the feed.
    const sink = start(feed.opening(kind, lastEventId));
    if (!sink) return;
    feed.attach(new Stream(kind, sink, feed));
  }

  streamsChanged(delta: number): void {
    this.open += delta;
    if (this.open > 0 && !this.poller) {
      this.poller = setInterval(() => this.poll(), POLL_MS);
      this.heartbeat = setInterval(() => this.beat(Date.now()), HEARTBEAT_MS);
      this.poller.unref();
      this.heartbeat.unref();
    } else if (this.open === 0 && this.poller) {
      clearInterval(this.poller);
      clearInterval(this.heartbeat!);
      this.poller = this.heartbeat = null;
    }
  }

  /** Reads the slot of every project with a stream; a moved one is refreshed (changes are sent from there). */
  poll(): void {
    for (const feed of this.feeds.values()) {
      if (feed.streams.size === 0 || feed.refreshing) continue;
      if (this.shared.flagsVersion(feed.projectId) !== feed.slotSeen) feed.refresh().catch(this.log);
    }
  }

  beat(now: number): void {
    for (const [id, feed] of this.feeds) {
      this.sender.push([...feed.streams], (stream) => stream.ping(now));
      if (feed.streams.size === 0 && feed.connecting === 0 && now - feed.idleSince > IDLE_FEED_MS) this.feeds.delete(id);
    }
  }

  /** Ends every stream cleanly (shutdown): clients reconnect, with their Last-Event-ID, elsewhere or later. */
  closeAll(): void {
    for (const feed of this.feeds.values()) for (const stream of [...feed.streams]) stream.end();
  }
}
