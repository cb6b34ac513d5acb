/**
 * A small Server-Sent Events client over fetch's body reader (the parsing an EventSource does, by hand): events
 * arrive in `events` in order; `next` waits for the next one not yet taken.
 */
export interface SseEvent {
  id: string;
  event: string;
  data: string;
}

export class SseStream {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  private taken = 0;
  private wake: (() => void) | null = null;
  private ended = false;
  /** The id of the last event received (what an EventSource sends back as Last-Event-ID). */
  lastEventId = '';

  private constructor(readonly status: number, readonly headers: Headers, readonly body: string, private readonly abort: AbortController) {}

  /** Connects; a non-200 answer is returned with its body read and no stream. */
  static async open(url: string, headers: Record<string, string> = {}, onEvent?: (e: SseEvent) => void): Promise<SseStream> {
    const abort = new AbortController();
    const res = await fetch(url, { headers, signal: abort.signal });
    if (res.status !== 200) return new SseStream(res.status, res.headers, await res.text(), abort);
    const stream = new SseStream(res.status, res.headers, '', abort);
    void stream.pump(res.body!, onEvent);
    return stream;
  }

  private async pump(body: ReadableStream<Uint8Array>, onEvent?: (e: SseEvent) => void): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    let current: SseEvent = { id: '', event: 'message', data: '' };
    let hasData = false;
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (hasData) {
              this.events.push(current);
              onEvent?.(current);
            }
            current = { id: this.lastEventId, event: 'message', data: '' };
            hasData = false;
            this.wake?.();
            continue;
          }
          if (line.startsWith(':')) {
            this.comments.push(line.slice(1).trim());
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') current.id = this.lastEventId = value;
          else if (field === 'event') current.event = value;
          else if (field === 'data') {
            current.data = hasData ? `${current.data}\n${value}` : value;
            hasData = true;
          }
        }
      }
    } catch {
      /* aborted */
    } finally {
      this.ended = true;
      this.wake?.();
    }
  }

  /** The next event not yet taken, waiting up to `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    while (this.taken >= this.events.length) {
      if (this.ended) throw new Error('the stream ended');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    return this.events[this.taken++]!;
  }

  /** Whether an event arrives within `ms` (for asserting that none does). */
  async quietFor(ms: number): Promise<boolean> {
    try {
      await this.next(ms);
      this.taken--;
      return false;
    } catch {
      return true;
    }
  }

  get isEnded(): boolean {
    return this.ended;
  }

  close(): void {
    this.abort.abort();
  }
}
