// The SMTP client and the e-mail sender (src/worker/notifications/smtp-client.ts, sender.ts) against smtp-server on
// 127.0.0.1: a message handed over with AUTH PLAIN, refusals that retrying cannot mend (5xx) and ones it may (4xx,
// no server), STARTTLS taken when offered with the certificate verified, and e-mail off without QUILL_SMTP_URL.
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { SMTPServer } from 'smtp-server';
import type { Config } from '../../src/config/schema.js';
import { parseSmtpUrl } from '../../src/domain/notifications/mail.js';
import { sendMail, SmtpError } from '../../src/worker/notifications/smtp-client.js';
import { senderFor } from '../../src/worker/notifications/sender.js';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

async function server(options: Record<string, unknown>): Promise<{ port: number; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const s = new SMTPServer({
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onData(stream: NodeJS.ReadableStream, session: any, callback: () => void) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      stream.on('end', () => {
        received.push({ from: session.envelope.mailFrom.address, to: session.envelope.rcptTo.map((r: any) => r.address), raw });
        callback();
      });
    },
    ...options,
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { port: (s.server.address() as AddressInfo).port, received, close: () => new Promise((r) => s.close(() => r())) };
}

const message = { subject: 'Héllo', text: 'body text', payload: {} };
const open = new AbortController().signal;
const config = (smtpUrl: string | null) => ({ smtpUrl, smtpFrom: 'Quill <q@quill.test>' }) as unknown as Config;

t.test('a message handed over with AUTH PLAIN', async (t) => {
  const logins: string[] = [];
  const s = await server({
    hideSTARTTLS: true, authOptional: false,
    onAuth(auth: any, _session: unknown, cb: (e: Error | null, r?: unknown) => void) {
      if (auth.method === 'PLAIN' && auth.username === 'me@x.test' && auth.password === 'p:ss') {
        logins.push(auth.username);
        cb(null, { user: auth.username });
      } else cb(new Error('Invalid username or password'));
    },
  });
  t.teardown(s.close);
  const send = senderFor(config(`smtp://me%40x.test:p%3Ass@127.0.0.1:${s.port}`));
  t.same(await send({ kind: 'email', to: 'ann@example.com' }, message, open), { ok: true, error: null, retry: false });
  t.same(logins, ['me@x.test']);
  t.equal(s.received.length, 1);
  t.match(s.received[0], { from: 'q@quill.test', to: ['ann@example.com'], raw: /^From: Quill <q@quill\.test>\r\nTo: ann@example\.com\r\nSubject: =\?UTF-8\?B\?/ });
  t.equal(Buffer.from(s.received[0]!.raw.split('\r\n\r\n')[1]!.replace(/\s+/g, ''), 'base64').toString('utf8'), 'body text');

  const wrong = await senderFor(config(`smtp://me%40x.test:nope@127.0.0.1:${s.port}`))({ kind: 'email', to: 'ann@example.com' }, message, open);
  t.match(wrong, { ok: false, retry: false, error: /^AUTH: 535 / }, 'refused credentials: final');
});

t.test('refusals: 5xx is final, 4xx and no server are retried', async (t) => {
  const s = await server({
    hideSTARTTLS: true,
    onRcptTo(address: any, _session: unknown, cb: (e?: Error) => void) {
      if (address.address.startsWith('gone')) return cb(Object.assign(new Error('No such user'), { responseCode: 550 }));
      if (address.address.startsWith('busy')) return cb(Object.assign(new Error('Try later'), { responseCode: 451 }));
      cb();
    },
  });
  t.teardown(s.close);
  const send = senderFor(config(`smtp://127.0.0.1:${s.port}`));
  t.match(await send({ kind: 'email', to: 'gone@example.com' }, message, open), { ok: false, retry: false, error: /^RCPT: 550 No such user/ });
  t.match(await send({ kind: 'email', to: 'busy@example.com' }, message, open), { ok: false, retry: true, error: /^RCPT: 451 Try later/ });
  await t.rejects(sendMail(parseSmtpUrl(`smtp://127.0.0.1:${s.port}`), 'q@quill.test', 'gone@example.com', 'x'), SmtpError);
  await s.close();
  t.match(await send({ kind: 'email', to: 'ann@example.com' }, message, open), { ok: false, retry: true, error: /ECONNREFUSED/ }, 'no server: tried again later');
});

t.test('STARTTLS when offered, with the certificate verified', async (t) => {
  // smtp-server offers STARTTLS with its own self-signed certificate: the client takes it and refuses the certificate.
  const s = await server({});
  t.teardown(s.close);
  const result = await senderFor(config(`smtp://127.0.0.1:${s.port}`))({ kind: 'email', to: 'ann@example.com' }, message, open);
  t.match(result, { ok: false, retry: true, error: /certificate/i });
  t.equal(s.received.length, 0, 'nothing sent in the clear');
});

t.test('the node closing cuts a conversation short', async (t) => {
  // A server that never greets: the conversation waits until the signal ends it.
  const silent = await server({ hideSTARTTLS: true, onConnect: () => undefined });
  t.teardown(silent.close);
  const closing = new AbortController();
  const started = Date.now();
  const sending = sendMail(parseSmtpUrl(`smtp://127.0.0.1:${silent.port}`), 'q@quill.test', 'ann@example.com', 'x', closing.signal);
  setTimeout(() => closing.abort(), 100);
  await t.rejects(sending, /the node is closing/);
  t.ok(Date.now() - started < 5000, 'at once, not at the 20 s timeout');
  await t.rejects(sendMail(parseSmtpUrl(`smtp://127.0.0.1:${silent.port}`), 'q@quill.test', 'ann@example.com', 'x', closing.signal), 'an aborted signal starts nothing');
});

t.test('e-mail off without QUILL_SMTP_URL', async (t) => {
  t.same(await senderFor(config(null))({ kind: 'email', to: 'ann@example.com' }, message, open), { ok: false, error: 'e-mail is off: QUILL_SMTP_URL is not set', retry: false });
});
