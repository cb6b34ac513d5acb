/**
 * Thousands of `GET /flags/stream` clients on raw sockets, in the bench process: each records when every change
 * event reached it. A raw client rather than EventSource or fetch so that 10,000 of them cost the bench little
 * (one socket and a short string each) and the arrival time is taken where the bytes arrive.
 */
import { connect, type Socket } from 'node:net';

export type CrowdKind = 'server' | 'browser';

interface Member {
  socket: Socket;
  kind: CrowdKind;
  /** Text after the last complete frame (frames end with a blank line; chunk headers ride along harmlessly). */
  pending: string;
  opened: boolean;
  /** performance.now() at which each change event arrived, in order. */
  changes: number[];
  closed: boolean;
}

export interface CrowdOptions {
  host: string;
  port: number;
  projectKey: string;
  personalKey: string;
}

export class SseCrowd {
  private readonly members: Member[] = [];
  private openedCount = 0;
  private openWaiters: (() => void)[] = [];
  closedEarly = 0;

  constructor(private readonly opts: CrowdOptions) {}

  get size(): number {
    return this.members.length;
  }

  get opened(): number {
    return this.openedCount;
  }

  /** Opens `count` streams of `kind`, `parallel` handshakes at a time; resolves once every one got its first frame. */
  async open(count: number, kind: CrowdKind, parallel = 500): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        next++;
        await this.openOne(kind);
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  }

  private openOne(kind: CrowdKind): Promise<void> {
    const { host, port, projectKey, personalKey } = this.opts;
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      socket.setNoDelay(true);
      const member: Member = { socket, kind, pending: '', opened: false, changes: [], closed: false };
      const auth = kind === 'server' ? `Authorization: Bearer ${personalKey}\r\n` : '';
      socket.on('connect', () => socket.write(`GET /flags/stream?token=${projectKey} HTTP/1.1\r\nHost: ${host}\r\n${auth}Accept: text/event-stream\r\n\r\n`));
      socket.setEncoding('latin1');
      socket.on('data', (text: string) => {
        const at = performance.now();
        let buffer = member.pending + text;
        if (!member.opened) {
          const head = buffer.indexOf('\r\n\r\n');
          if (head < 0) return void (member.pending = buffer);
          if (!buffer.startsWith('HTTP/1.1 200')) {
            socket.destroy();
            return reject(new Error(`stream refused: ${buffer.slice(0, buffer.indexOf('\r\n'))}`));
          }
          buffer = buffer.slice(head + 4);
        }
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!member.opened) {
            // The first frame: `version` for a server stream, an id-only frame for a browser.
            member.opened = true;
            this.members.push(member);
            this.openedCount++;
            resolve();
          } else if (frame.includes('event: change')) {
            member.changes.push(at);
          }
        }
        member.pending = buffer;
      });
      socket.on('error', (error) => {
        if (!member.opened) reject(error);
      });
      socket.on('close', () => {
        if (member.opened && !member.closed) this.closedEarly++;
        member.closed = true;
      });
    });
  }

  /** Resolves once every stream has received `count` change events, or after `timeoutMs`. */
  async allReceived(count: number, timeoutMs: number): Promise<boolean> {
    const until = performance.now() + timeoutMs;
    while (performance.now() < until) {
      if (this.members.every((m) => m.changes.length >= count || m.closed)) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  }

  /** Arrival times of change `index` (0-based) at every stream that got it, and how many did not. */
  arrivals(index: number): { times: number[]; missing: number } {
    const times: number[] = [];
    let missing = 0;
    for (const m of this.members) {
      const at = m.changes[index];
      if (at === undefined) missing++;
      else times.push(at);
    }
    return { times, missing };
  }

  /** Change events received beyond `expected` per stream (coalescing shows as fewer, duplicates as more). */
  extra(expected: number): number {
    let extra = 0;
    for (const m of this.members) extra += Math.max(0, m.changes.length - expected);
    return extra;
  }

  close(): void {
    for (const m of this.members) {
      m.closed = true;
      m.socket.destroy();
    }
  }
}
