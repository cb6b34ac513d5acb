/**
 * Wrong-password throttling for console sign-in, keyed so that an attacker cannot turn it against the owner
 * (django-axes' `username+ip` lockouts; most identity providers do the same):
 *
 *  - per (account, client address): the first `PAIR_RULE.free` failures are answered at once, then each further
 *    attempt waits a delay that doubles with every failure. A flood of wrong passwords from one address slows only
 *    that address's attempts on that account: the right password from any other address is checked at once.
 *  - per client address, across accounts: the same schedule with more free failures and a higher ceiling, so one
 *    address spraying many accounts is slowed too (and a pair key per account cannot be used to escape it).
 *
 * There is deliberately no per-account limit: a count that any address can raise is the lever that lets anyone
 * lock the owner out. What bounds a guesser spread over many addresses is the pair schedule times its addresses
 * (IPv6 addresses count per /64, the block one subscriber gets, so a single host cannot mint fresh addresses).
 * Signed-in sessions and API keys are never looked at here: only `POST /api/login` passes through.
 *
 * An attempt counts as a failure from the moment it starts (`begin`) and is forgiven only if it succeeds
 * (`succeeded`): otherwise many guesses sent at once would all be checked before the first failure was recorded.
 * A refused attempt is not checked and not counted, but restarts the wait that refused it (django-axes'
 * AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT): a client that keeps knocking waits the whole delay, one that
 * waits as `Retry-After` says is checked, and `Retry-After` is exactly the delay of the failures counted so far.
 *
 * Pure and in memory (the front keeps one, no I/O); `now` is a parameter. Each table holds at most `maxEntries`
 * keys; when full, the key whose last failure is the oldest is forgotten. Forgetting only ever lifts a delay, so an
 * attacker filling a table can at worst reset some counts (and needs `maxEntries` fresh failures, themselves
 * slowed per address, to do it), never lock anyone out.
 */
export interface DelayRule {
  /** Failures answered without delay. */
  free: number;
  /** The wait after failure `free + 1`; it doubles with each further failure… */
  baseMs: number;
  /** …up to this ceiling. */
  capMs: number;
  /** A key whose last failure (or refused attempt) is this old is forgotten; at least `capMs`. */
  forgetMs: number;
}

/**
 * Per (account, address). Five failures free covers a person mistyping; then 1 s, 2 s, 4 s … doubling: a person
 * barely notices the first few, while a script gets 15 guesses in the first 17 minutes and then one every
 * 15 minutes (the ceiling, the old fixed lockout), about 100 a day per address, against passwords of at least
 * 8 characters hashed with scrypt. Forgotten after a day without failures.
 */
export const PAIR_RULE: DelayRule = { free: 5, baseMs: 1000, capMs: 15 * 60_000, forgetMs: 24 * 3_600_000 };

/**
 * Per address, across accounts. 30 failures free (the old per-address limit: several people behind one NAT, or
 * one trying a few of their e-mails), then the same doubling up to an hour, so spraying many accounts from one
 * address settles at about one guess an hour. Forgotten after a day without failures.
 */
export const ADDRESS_RULE: DelayRule = { free: 30, baseMs: 1000, capMs: 60 * 60_000, forgetMs: 24 * 3_600_000 };

/** Keys per table: a pair key is at most 254 + 1 + 64 characters, so about 50 MB at worst for both tables. */
const MAX_ENTRIES = 100_000;

/** The wait after `failures` counted failures under `rule`, in milliseconds. */
export function delayMs(rule: DelayRule, failures: number): number {
  if (failures < rule.free) return 0;
  const doublings = failures - rule.free;
  return doublings >= 52 ? rule.capMs : Math.min(rule.capMs, rule.baseMs * 2 ** doublings);
}

interface Entry {
  failures: number;
  /** The last counted failure or refused attempt: the wait runs from here. */
  last: number;
}

class DelayTable {
  /** Insertion order is `last` order: every update deletes and re-inserts its key. */
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly rule: DelayRule, private readonly maxEntries: number) {
    if (rule.forgetMs < rule.capMs) throw new Error('a throttle rule must not forget a key before its wait ends');
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops the keys forgotten by `now` (they are at the front) and returns `key`'s entry if it is still known. */
  private current(key: string, now: number): Entry | undefined {
    for (const [k, e] of this.entries) {
      if (now - e.last < this.rule.forgetMs) break;
      this.entries.delete(k);
    }
    return this.entries.get(key);
  }

  private touch(key: string, entry: Entry): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }

  /** Milliseconds until `key` may be checked again, or 0. */
  waitMs(key: string, now: number): number {
    const e = this.current(key, now);
    return e ? Math.max(0, e.last + delayMs(this.rule, e.failures) - now) : 0;
  }

  /** A refused attempt: if `key` is waiting, its wait starts again from `now`. */
  restart(key: string, now: number): void {
    const e = this.current(key, now);
    if (e && e.last + delayMs(this.rule, e.failures) > now) this.touch(key, { failures: e.failures, last: now });
  }

  fail(key: string, now: number): void {
    const e = this.current(key, now);
    this.touch(key, { failures: (e?.failures ?? 0) + 1, last: now });
  }

  /** Takes back one failure (the attempt that succeeded), or all of them. */
  forgive(key: string, now: number, all: boolean): void {
    const e = this.current(key, now);
    if (!e) return;
    if (all || e.failures <= 1) this.entries.delete(key);
    else e.failures--;
  }
}

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class LoginThrottle {
  private readonly pairs: DelayTable;
  private readonly addresses: DelayTable;

  constructor(pairRule: DelayRule = PAIR_RULE, addressRule: DelayRule = ADDRESS_RULE, maxEntries = MAX_ENTRIES) {
    this.pairs = new DelayTable(pairRule, maxEntries);
    this.addresses = new DelayTable(addressRule, maxEntries);
  }

  /** Keys held (for tests: the tables stay bounded). */
  get size(): { pairs: number; addresses: number } {
    return { pairs: this.pairs.size, addresses: this.addresses.size };
  }

  /**
   * Called before the password is checked: refuses (restarting the waits that refused it), or counts the attempt
   * as a failure until `succeeded`.
   */
  begin(account: string, address: string, now: number): ThrottleVerdict {
    const addr = addressKey(address);
    const pair = `${account}\n${addr}`;
    if (Math.max(this.pairs.waitMs(pair, now), this.addresses.waitMs(addr, now)) > 0) {
      this.pairs.restart(pair, now);
      this.addresses.restart(addr, now);
      const wait = Math.max(this.pairs.waitMs(pair, now), this.addresses.waitMs(addr, now));
      return { allowed: false, retryAfterSeconds: Math.ceil(wait / 1000) };
    }
    this.pairs.fail(pair, now);
    this.addresses.fail(addr, now);
    return { allowed: true };
  }

  /** The attempt begun for this account and address had the right password: the pair starts afresh. */
  succeeded(account: string, address: string, now: number): void {
    const addr = addressKey(address);
    this.pairs.forgive(`${account}\n${addr}`, now, true);
    this.addresses.forgive(addr, now, false);
  }
}

/** Longest e-mail an account can have (account-fields.ts): a longer one is no one's, and all share one key. */
const MAX_EMAIL = 254;

/** The account key of an e-mail: e-mails are compared case-insensitively. */
export function accountKey(email: unknown): string {
  if (typeof email !== 'string') return '';
  const key = email.trim().toLowerCase();
  return key.length > MAX_EMAIL ? '\u0000too-long' : key;
}

/**
 * The throttling key of a client address: an IPv4 address as it is (also when written IPv4-mapped, `::ffff:a.b.c.d`),
 * an IPv6 address by its /64 (the block a single subscriber is given, so one host cannot escape the count with
 * fresh addresses), anything else as written, cut to 64 characters.
 */
export function addressKey(address: string): string {
  const a = address.trim().toLowerCase();
  if (!a.includes(':')) return a.slice(0, 64);
  const groups = ipv6Groups(a);
  if (!groups) return a.slice(0, 64);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (with `::` and a dotted IPv4 tail), or null if it is not one. */
function ipv6Groups(a: string): number[] | null {
  const zone = a.indexOf('%');
  let text = zone >= 0 ? a.slice(0, zone) : a;
  const tail: number[] = [];
  const dotted = /(?:^|:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const b = dotted.slice(1).map(Number);
    if (b.some((x) => x > 255)) return null;
    tail.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
    text = text.slice(0, text.length - dotted[0].length + (dotted[0].startsWith(':') ? 1 : 0));
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !rest) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
}

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
