/**
 * What alerts and subscriptions deliver to, started by a test on 127.0.0.1: a webhook receiver (node:http) that
 * keeps every body it gets (and answers 500 on paths starting with /fail), and an SMTP server (smtp-server, AUTH
 * PLAIN as `quill`/`secret`) that keeps every message with its text decoded.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  path: string;
  body: any;
}

export interface WebhookReceiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* kept as text */
      }
      received.push({ path: req.url ?? '', body });
      res.statusCode = req.url?.startsWith('/fail') ? 500 : 200;
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received, close: () => new Promise((r) => server.close(() => r())) };
}

export interface Mail {
  from: string;
  to: string[];
  headers: Record<string, string>;
  text: string;
}

export interface SmtpReceiver {
  port: number;
  mails: Mail[];
  logins: string[];
  close(): Promise<void>;
}

/** A raw message's headers (names lower-cased) and its text (base64 or not). */
function parseMail(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = raw.slice(split + 4);
  const text = /base64/i.test(headers['content-transfer-encoding'] ?? '') ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8') : body;
  return { headers, text };
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: Mail[] = [];
  const logins: string[] = [];
  const server = new SMTPServer({
    // A test server on the loopback: no TLS, and AUTH PLAIN allowed without it.
    hideSTARTTLS: true,
    allowInsecureAuth: true,
    authMethods: ['PLAIN'],
    onAuth(auth, _session, callback) {
      if (auth.username === 'quill' && auth.password === 'secret') {
        logins.push(auth.username);
        callback(null, { user: auth.username });
      } else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      stream.on('end', () => {
        mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), ...parseMail(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.server.address() as AddressInfo;
  return { port, mails, logins, close: () => new Promise((r) => server.close(() => r())) };
}
