/**
 * Wrong-password throttling for console sign-in, per account and per client address: after `max` failures within
 * `windowMs`, further attempts on that account (or from that address) are refused without checking the password
 * until the window that began with the first failure has passed. A success clears the account's count.
 *
 * An attempt counts as a failure from the moment it starts (`begin`) and is forgiven only if it succeeds
 * (`succeeded`): otherwise many guesses sent at once would all be checked before the first failure was recorded.
 *
 * Pure and in memory (the front keeps one, no I/O); `now` is a parameter. The tables are bounded: when full, the
 * oldest window is dropped first (an attacker filling the table can at worst reset the oldest counts, never lock
 * anyone out beyond their own attempts).
 */
export interface ThrottleRule {
  max: number;
  windowMs: number;
}

export const ACCOUNT_RULE: ThrottleRule = { max: 5, windowMs: 15 * 60_000 };
export const ADDRESS_RULE: ThrottleRule = { max: 30, windowMs: 15 * 60_000 };
const MAX_ENTRIES = 100_000;

interface Window {
  start: number;
  failures: number;
}

class Counter {
  /** Insertion order is window-start order: a window restarts by deletion and re-insertion. */
  private readonly windows = new Map<string, Window>();

  constructor(private readonly rule: ThrottleRule) {}

  private current(key: string, now: number): Window | undefined {
    const w = this.windows.get(key);
    if (w && now - w.start >= this.rule.windowMs) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  /** Milliseconds until `key` may try again, or 0. */
  blockedFor(key: string, now: number): number {
    const w = this.current(key, now);
    return w && w.failures >= this.rule.max ? w.start + this.rule.windowMs - now : 0;
  }

  fail(key: string, now: number): void {
    const w = this.current(key, now);
    if (w) {
      w.failures++;
      return;
    }
    if (this.windows.size >= MAX_ENTRIES) this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(key, { start: now, failures: 1 });
  }

  forgive(key: string, now: number, clear: boolean): void {
    const w = this.current(key, now);
    if (!w) return;
    if (clear) this.windows.delete(key);
    else w.failures = Math.max(0, w.failures - 1);
  }
}

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class LoginThrottle {
  private readonly accounts: Counter;
  private readonly addresses: Counter;

  constructor(accountRule: ThrottleRule = ACCOUNT_RULE, addressRule: ThrottleRule = ADDRESS_RULE) {
    this.accounts = new Counter(accountRule);
    this.addresses = new Counter(addressRule);
  }

  /** Called before the password is checked: refuses, or counts the attempt as a failure until `succeeded`. */
  begin(account: string, address: string, now: number): ThrottleVerdict {
    const wait = Math.max(this.accounts.blockedFor(account, now), this.addresses.blockedFor(address, now));
    if (wait > 0) return { allowed: false, retryAfterSeconds: Math.ceil(wait / 1000) };
    this.accounts.fail(account, now);
    this.addresses.fail(address, now);
    return { allowed: true };
  }

  /** The attempt begun for this account and address had the right password. */
  succeeded(account: string, address: string, now: number): void {
    this.accounts.forgive(account, now, true);
    this.addresses.forgive(address, now, false);
  }
}

/** The account key of an e-mail: e-mails are compared case-insensitively. */
export const accountKey = (email: unknown): string => (typeof email === 'string' ? email.trim().toLowerCase() : '');

/**
 * The client address for throttling. `X-Forwarded-For` is believed only from a loopback peer (a reverse proxy on
 * the same host), and then its last entry (the address that proxy saw); from anywhere else a client could write
 * any address there and escape the per-address count.
 */
export function clientAddress(peer: string, forwardedFor: string): string {
  const loopback = peer === '::1' || peer.startsWith('127.') || peer.startsWith('::ffff:127.') || peer === '0000:0000:0000:0000:0000:0000:0000:0001';
  if (loopback && forwardedFor.trim()) {
    const parts = forwardedFor.split(',');
    return parts[parts.length - 1]!.trim() || peer;
  }
  return peer;
}
