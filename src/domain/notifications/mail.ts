/**
 * E-mail, pure: the SMTP server setting (QUILL_SMTP_URL), addresses, the message as it goes over SMTP's DATA, and
 * the server's replies. The dialogue itself is src/worker/notifications/smtp-client.ts.
 */

export interface SmtpSettings {
  /** TLS from the first byte (smtps://, port 465 by default); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  host: string;
  port: number;
  user: string | null;
  password: string | null;
}

/**
 * `smtp://[user:password@]host[:port]` (587 by default) or `smtps://…` (465); user and password are URL-encoded
 * (`@` as `%40`). Throws an Error saying what is wrong.
 */
export function parseSmtpUrl(text: string): SmtpSettings {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new Error('is not a URL (smtp://user:password@host:port or smtps://…)');
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new Error('must start with smtp:// or smtps://');
  if (u.hostname === '') throw new Error('has no host');
  const secure = u.protocol === 'smtps:';
  const user = u.username === '' ? null : decodeURIComponent(u.username);
  return {
    secure, host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port === '' ? (secure ? 465 : 587) : Number(u.port),
    user, password: user === null ? null : decodeURIComponent(u.password),
  };
}

/** An address as Django's EmailValidator roughly accepts it, and nothing that could break an SMTP command. */
export function isEmailAddress(s: string): boolean {
  return s.length <= 254 && /^[^\s@<>(),;:"\\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+$/.test(s);
}

/** The addresses of a comma-separated list (PostHog's `target_value` for e-mail), trimmed, without empties. */
export function emailsOf(list: string): string[] {
  return list.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** The address inside `Name <address>` (QUILL_SMTP_FROM may be either). */
export function bareAddress(from: string): string {
  return /<([^>]+)>\s*$/.exec(from)?.[1]?.trim() ?? from.trim();
}

/** A header value in RFC 2047 when it is not plain ASCII; line breaks never reach a header. */
function headerText(s: string): string {
  const flat = s.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(flat) ? flat : `=?UTF-8?B?${Buffer.from(flat, 'utf8').toString('base64')}?=`;
}

export interface MailParts {
  from: string;
  to: string;
  subject: string;
  text: string;
  date: Date;
  messageId: string;
}

/**
 * The message as DATA carries it: headers, a UTF-8 text body in base64 (lines of 76), CRLF line ends, and lines
 * starting with a dot doubled (RFC 5321 §4.5.2), without the final `.` line.
 */
export function mimeMessage(m: MailParts): string {
  const body = Buffer.from(m.text.replace(/\r?\n/g, '\r\n'), 'utf8').toString('base64').replace(/.{1,76}/g, '$&\r\n');
  const lines = [
    `From: ${headerText(m.from)}`,
    `To: ${m.to}`,
    `Subject: ${headerText(m.subject)}`,
    `Date: ${m.date.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${m.messageId}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    body,
  ];
  return lines.join('\r\n').replace(/^\./gm, '..');
}

export interface SmtpReply {
  code: number;
  /** The text of every line, without the code. */
  lines: string[];
}

/**
 * The first complete reply in `buffer` (a multi-line reply is `250-…` lines then `250 …`) and what follows it, or
 * null while it is incomplete.
 */
export function takeReply(buffer: string): { reply: SmtpReply; rest: string } | null {
  const lines: string[] = [];
  let offset = 0;
  for (;;) {
    const end = buffer.indexOf('\r\n', offset) >= 0 ? buffer.indexOf('\r\n', offset) : buffer.indexOf('\n', offset);
    if (end < 0) return null;
    const line = buffer.slice(offset, end);
    offset = end + (buffer[end] === '\r' ? 2 : 1);
    const m = /^(\d{3})([ -]?)(.*)$/.exec(line);
    if (!m) throw new Error(`not an SMTP reply: ${line.slice(0, 200)}`);
    lines.push(m[3]!);
    if (m[2] !== '-') return { reply: { code: Number(m[1]), lines }, rest: buffer.slice(offset) };
  }
}
