/**
 * A small SMTP client (RFC 5321) on node:net and node:tls, enough to hand one message to the operator's server:
 * EHLO, STARTTLS when the server offers it on a plain connection (certificates are verified), AUTH PLAIN when
 * the URL has a user, MAIL FROM, RCPT TO, DATA, QUIT. One connection per message: alerts and reports are rare, and
 * a connection of its own makes each delivery's outcome its own. The message text and the replies are the pure
 * src/domain/notifications/mail.ts.
 */
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import { takeReply, type SmtpReply, type SmtpSettings } from '../../domain/notifications/mail.js';

/** An SMTP delivery that failed; `permanent` for a 5xx reply (retrying would get the same). */
export class SmtpError extends Error {
  override readonly name = 'SmtpError';
  constructor(message: string, readonly permanent: boolean) {
    super(message);
  }
}

/** The TLS server name of a host: none for an address (SNI carries names only, RFC 6066 §3). */
const serverName = (host: string): { servername?: string } => (isIP(host) === 0 ? { servername: host } : {});

const TIMEOUT_MS = 20_000;

class Connection {
  private buffer = '';
  private waiter: { resolve: (r: SmtpReply) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;

  constructor(private socket: Socket) {
    this.listen(socket);
  }

  private listen(socket: Socket): void {
    socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error(`no answer from the SMTP server in ${TIMEOUT_MS / 1000} s`)));
    socket.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString('utf8');
      this.pump();
    });
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('the SMTP server closed the connection')));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    const w = this.waiter;
    this.waiter = null;
    w?.reject(this.failure);
  }

  private pump(): void {
    if (!this.waiter) return;
    let taken;
    try {
      taken = takeReply(this.buffer);
    } catch (e) {
      this.fail(e as Error);
      return;
    }
    if (!taken) return;
    this.buffer = taken.rest;
    const w = this.waiter;
    this.waiter = null;
    w.resolve(taken.reply);
  }

  reply(): Promise<SmtpReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.pump();
    });
  }

  /** Sends `line` (unless null) and expects a reply with one of `codes`; `shown` replaces the line in errors. */
  async expect(line: string | null, codes: number[], shown = line ?? 'greeting'): Promise<SmtpReply> {
    if (line !== null) this.socket.write(`${line}\r\n`);
    const r = await this.reply();
    if (!codes.includes(r.code)) throw new SmtpError(`${shown.split(' ')[0]}: ${r.code} ${r.lines.join(' ').slice(0, 300)}`, r.code >= 500);
    return r;
  }

  /** Moves the conversation onto TLS over the same socket (after `STARTTLS` was accepted). */
  async upgrade(servername: string): Promise<void> {
    const plain = this.socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('error');
    plain.removeAllListeners('close');
    plain.setTimeout(0);
    const secure = tlsConnect({ socket: plain, host: servername, ...serverName(servername) });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', resolve);
      secure.once('error', reject);
    });
    this.socket = secure;
    this.buffer = '';
    this.listen(secure);
  }

  /** Ends the conversation at once: the pending reply fails with `reason`. */
  abort(reason: Error): void {
    this.socket.destroy(reason);
  }

  close(): void {
    this.socket.end();
    this.socket.destroy();
  }
}

function open(s: SmtpSettings): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = s.secure ? tlsConnect({ host: s.host, port: s.port, ...serverName(s.host) }) : netConnect({ host: s.host, port: s.port });
    const timer = setTimeout(() => socket.destroy(new Error(`could not connect to ${s.host}:${s.port} in ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
    socket.once(s.secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

const capabilities = (r: SmtpReply): string[] => r.lines.slice(1).map((l) => l.toUpperCase());

/**
 * Hands `data` (src/domain/notifications/mail.ts `mimeMessage`) for `to` to the server; throws SmtpError or a
 * network Error. `signal` cuts the conversation short (the node closing).
 */
export async function sendMail(s: SmtpSettings, fromAddress: string, to: string, data: string, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  const c = new Connection(await open(s));
  const stop = () => c.abort(new Error('the node is closing'));
  signal?.addEventListener('abort', stop, { once: true });
  try {
    await c.expect(null, [220]);
    const me = hostname() || 'localhost';
    let hello = await c.expect(`EHLO ${me}`, [250]);
    if (!s.secure && capabilities(hello).includes('STARTTLS')) {
      await c.expect('STARTTLS', [220]);
      await c.upgrade(s.host);
      hello = await c.expect(`EHLO ${me}`, [250]);
    }
    if (s.user !== null) {
      const auth = capabilities(hello).find((l) => l.startsWith('AUTH'));
      if (auth && !auth.split(/[ =]/).includes('PLAIN')) throw new SmtpError('the SMTP server does not take AUTH PLAIN', true);
      const token = Buffer.from(`\u0000${s.user}\u0000${s.password ?? ''}`, 'utf8').toString('base64');
      await c.expect(`AUTH PLAIN ${token}`, [235], 'AUTH PLAIN');
    }
    await c.expect(`MAIL FROM:<${fromAddress}>`, [250]);
    await c.expect(`RCPT TO:<${to}>`, [250, 251]);
    await c.expect('DATA', [354]);
    await c.expect(`${data}\r\n.`, [250], 'DATA');
    await c.expect('QUIT', [221]).catch(() => undefined);
  } finally {
    signal?.removeEventListener('abort', stop);
    c.close();
  }
}
