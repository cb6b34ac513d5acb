/**
 * One delivery attempt of a stored message to one target: a webhook POST, or one e-mail through the operator's
 * SMTP server. It never throws: the outcome (and whether a retry could help) is what the outbox records.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/schema.js';
import { bareAddress, mimeMessage, parseSmtpUrl } from '../../domain/notifications/mail.js';
import { webhookBody, type AttemptResult, type NotificationMessage, type Target } from '../../domain/notifications/outbox.js';
import { sendMail, SmtpError } from './smtp-client.js';

const WEBHOOK_TIMEOUT_MS = 10_000;

/** One attempt; `signal` (the node closing) cuts it short. */
export type Send = (target: Target, message: NotificationMessage, signal: AbortSignal) => Promise<AttemptResult>;

function reason(error: unknown): string {
  const e = error as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${e?.message ?? String(error)}${cause ? ` (${cause})` : ''}`.slice(0, 500);
}

async function postWebhook(url: string, body: Record<string, unknown>, signal: AbortSignal): Promise<AttemptResult> {
  try {
    const res = await fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'Quill' }, body: JSON.stringify(body),
      // A redirect would turn the POST into a GET elsewhere: it counts as a failure to look into.
      redirect: 'manual', signal: AbortSignal.any([AbortSignal.timeout(WEBHOOK_TIMEOUT_MS), signal]),
    });
    await res.body?.cancel();
    return res.ok ? { ok: true, error: null, retry: false } : { ok: false, error: `HTTP ${res.status}`, retry: true };
  } catch (error) {
    return { ok: false, error: reason(error), retry: true };
  }
}

/** The sender of a node, with its configuration: e-mail is off (a final failure) without QUILL_SMTP_URL. */
export function senderFor(config: Readonly<Config>): Send {
  const smtp = config.smtpUrl === null ? null : parseSmtpUrl(config.smtpUrl);
  return async (target, message, signal) => {
    if (target.kind === 'webhook') return postWebhook(target.url, webhookBody(message, target.format), signal);
    if (smtp === null) return { ok: false, error: 'e-mail is off: QUILL_SMTP_URL is not set', retry: false };
    const from = bareAddress(config.smtpFrom);
    const data = mimeMessage({ from: config.smtpFrom, to: target.to, subject: message.subject, text: message.text, date: new Date(), messageId: `${randomUUID()}@${from.split('@')[1] ?? 'quill'}` });
    try {
      await sendMail(smtp, from, target.to, data, signal);
      return { ok: true, error: null, retry: false };
    } catch (error) {
      return { ok: false, error: reason(error), retry: !(error instanceof SmtpError && error.permanent) };
    }
  };
}
