/**
 * The outbox of alerts and subscriptions, pure: a message is stored with one state per target (a webhook, an
 * e-mail address) in the same transaction that records the check or report it tells about, and the node then
 * delivers it (src/worker/notifications/outbox-job.ts). Each attempt is recorded; a failed target is retried after
 * a delay that doubles each time, at most MAX_ATTEMPTS times in all, unless the failure is one a retry cannot mend
 * (e-mail not configured, an address the SMTP server refuses for good).
 *
 * Because the message is stored before it is sent, a crash loses none: the next start sends what was pending. A
 * crash between a send and the record of its outcome sends it once more (at least once, as every webhook sender).
 */

/** Where a message goes. `format` is the webhook body: a generic JSON document or a Slack incoming-webhook body. */
export type Target = { kind: 'webhook'; url: string; format: WebhookFormat } | { kind: 'email'; to: string };
export type WebhookFormat = 'json' | 'slack';

/** What is sent: a subject and plain text (e-mail, Slack) and the generic webhook's JSON document. */
export interface NotificationMessage {
  subject: string;
  text: string;
  payload: Record<string, unknown>;
}

export interface TargetState {
  target: Target;
  attempts: number;
  /** Delivered, or given up. */
  done: boolean;
  ok: boolean;
  /** When the next attempt is due (epoch ms), while not done. */
  next_at: number | null;
}

/** One attempt, as the API shows it. */
export interface DeliveryAttempt {
  at: string;
  target: string;
  attempt: number;
  ok: boolean;
  error: string | null;
}

/** A stored message with its targets' states and every attempt so far. */
export interface OutgoingMessage {
  message: NotificationMessage;
  targets: TargetState[];
  deliveries: DeliveryAttempt[];
}

export interface AttemptResult {
  ok: boolean;
  error: string | null;
  /** False when trying again cannot help (the failure is final at once). */
  retry: boolean;
}

export const MAX_ATTEMPTS = 3;

/** What a target is called in an attempt's record: the webhook's URL without credentials, or the address. */
export function targetLabel(t: Target): string {
  if (t.kind === 'email') return t.to;
  try {
    const u = new URL(t.url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return t.url;
  }
}

/** A new message to `targets`, each due now. */
export function outgoing(message: NotificationMessage, targets: readonly Target[], now: number): OutgoingMessage {
  return { message, targets: targets.map((target) => ({ target, attempts: 0, done: false, ok: false, next_at: now })), deliveries: [] };
}

/** Indexes of the targets whose attempt is due at `now`. */
export function dueTargets(m: OutgoingMessage, now: number): number[] {
  return m.targets.flatMap((s, i) => (!s.done && s.next_at !== null && s.next_at <= now ? [i] : []));
}

/**
 * The message after one attempt at target `index`: its state and a record of the attempt. A failure is retried
 * `retryMs`, then 2×, 4×… later until MAX_ATTEMPTS attempts were made.
 */
export function afterAttempt(m: OutgoingMessage, index: number, result: AttemptResult, now: number, retryMs: number): OutgoingMessage {
  const before = m.targets[index];
  if (!before || before.done) return m;
  const attempts = before.attempts + 1;
  const finalFailure = !result.ok && (!result.retry || attempts >= MAX_ATTEMPTS);
  const state: TargetState = {
    ...before, attempts, ok: result.ok, done: result.ok || finalFailure,
    next_at: result.ok || finalFailure ? null : now + retryMs * 2 ** (attempts - 1),
  };
  const attempt: DeliveryAttempt = { at: new Date(now).toISOString(), target: targetLabel(before.target), attempt: attempts, ok: result.ok, error: result.ok ? null : result.error ?? 'failed' };
  return { ...m, targets: m.targets.map((s, i) => (i === index ? state : s)), deliveries: [...m.deliveries, attempt] };
}

/** The earliest attempt still due among messages (epoch ms), or null when every target is done. */
export function nextAttemptAt(messages: readonly OutgoingMessage[]): number | null {
  let next: number | null = null;
  for (const m of messages) for (const s of m.targets) if (!s.done && s.next_at !== null && (next === null || s.next_at < next)) next = s.next_at;
  return next;
}

/** Did at least one target receive the message? (PostHog's `targets_notified`.) */
export const notifiedAny = (m: OutgoingMessage | null): boolean => m !== null && m.targets.some((s) => s.ok);

/** The webhook body for a target: Slack's `{text, blocks}` or the generic document. */
export function webhookBody(message: NotificationMessage, format: WebhookFormat): Record<string, unknown> {
  if (format === 'json') return message.payload;
  const text = `*${message.subject}*\n${message.text}`;
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: text.slice(0, 3000) } }] };
}

/**
 * The body a webhook URL gets: Slack's when asked, or when the URL is a Slack incoming webhook (hooks.slack.com),
 * else the generic JSON document.
 */
export function webhookFormatOf(url: string, asked: WebhookFormat | null): WebhookFormat {
  if (asked !== null) return asked;
  try {
    return new URL(url).hostname.toLowerCase() === 'hooks.slack.com' ? 'slack' : 'json';
  } catch {
    return 'json';
  }
}

/** Null when `url` is one a webhook may be sent to (http or https, a host), else why not. */
export function webhookUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'Enter a valid URL.';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'A webhook URL is http:// or https://.';
  if (u.hostname === '') return 'Enter a valid URL.';
  return null;
}
