/**
 * HTTP/1.1 over a plain TCP socket, for tests that need control fetch() does not give: keeping one connection
 * open across a server's state change, sending a body in pieces, and `Expect: 100-continue`, whose interim
 * `100 Continue` proves the server has parsed the request head and started handling it.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export class RawConnection {
  private buffer = Buffer.alloc(0);
  private readonly waiting: { resolve: (r: RawResponse) => void; reject: (e: Error) => void }[] = [];
  private readonly ready: RawResponse[] = [];
  private ended: Error | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    const end = (why: string) => () => {
      this.ended ??= new Error(why);
      for (const w of this.waiting.splice(0)) w.reject(this.ended);
    };
    socket.on('end', end('connection closed by the server'));
    socket.on('close', end('connection closed'));
    socket.on('error', (e) => end(`connection error: ${e.message}`)());
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Whether the server closed this connection. */
  get closed(): boolean {
    return this.ended !== null;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Sends a request head (and `body`, if given) and resolves with the next response on this connection. */
  request(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<RawResponse> {
    this.write(head(method, path, body === undefined ? null : Buffer.byteLength(body), headers) + (body ?? ''));
    return this.next();
  }

  /** The next response (interim `100 Continue` included) on this connection. */
  next(): Promise<RawResponse> {
    const r = this.ready.shift();
    if (r) return Promise.resolve(r);
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(): void {
    for (;;) {
      const headEnd = this.buffer.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const lines = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
      const status = Number(lines[0]!.split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = status === 100 || status === 204 || status === 304 ? 0 : Number(headers['content-length'] ?? 0);
      if (this.buffer.length < headEnd + 4 + length) return;
      const body = this.buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(headEnd + 4 + length);
      const response = { status, headers, body };
      const w = this.waiting.shift();
      if (w) w.resolve(response);
      else this.ready.push(response);
    }
  }
}

/** A request head; `length` null means no body. */
export function head(method: string, path: string, length: number | null, headers: Record<string, string> = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  if (length !== null) lines.push(`Content-Length: ${length}`);
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}
