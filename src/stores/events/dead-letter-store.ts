/**
 * Events a shard acknowledged but cannot apply (a dead-letter store, as PostHog's pipeline has): set aside with
 * the reason, so the apply loop moves on instead of retrying one poison event forever, and nothing acknowledged
 * disappears without a trace. Kept in the shard's events environment, so setting an event aside commits with the
 * chunk that moves past it; counted in `/_stats` (`deadLetters`).
 *
 * An entry is one event (keyed by project and uuid: a replay of the same record finds it set aside already and
 * does not try again) or, when a log record cannot be read back at all, the whole record (keyed by its place in its
 * source log).
 *
 * Beside them, samples of what capture refused before acknowledging (`dropped`: an event past the shape bounds,
 * src/domain/ingest/event-shape.ts), so an operator can see what was sent: the start of the request's text, at most
 * SAMPLES_PER_REASON per reason (each new one replaces the oldest), not counted as set aside.
 */
import type { Env, Table } from '../lmdb-env.js';
import { openJsonTable } from '../lmdb-env.js';

export interface DeadLetter {
  kind: 'event' | 'record' | 'dropped';
  team: number | null;
  uuid: string | null;
  /** Where the request was logged: the source shard and the record's end there. */
  source: number;
  end: number;
  /** What failed, e.g. `RangeError: Maximum call stack size exceeded`. */
  reason: string;
  /** When it was set aside (ISO). */
  at: string;
  /** The event as it was when it failed (JSON), or the record's text when the event itself cannot be serialised. */
  content: string;
}

const MAX_REASON_LENGTH = 200;

/** A short, stable description of an error, the key the reasons are counted by. */
export function reasonOf(error: unknown): string {
  const e = error as { name?: unknown; message?: unknown } | null;
  const text = e && typeof e.message === 'string' ? `${typeof e.name === 'string' ? e.name : 'Error'}: ${e.message}` : String(error);
  return text.length > MAX_REASON_LENGTH ? text.slice(0, MAX_REASON_LENGTH) : text;
}

/** Samples kept per reason capture drops for. */
export const SAMPLES_PER_REASON = 10;

function keyOf(letter: DeadLetter): string {
  if (letter.kind === 'dropped') return `dropped:${letter.reason}:${letter.end % SAMPLES_PER_REASON}`;
  return letter.kind === 'event' ? `event:${letter.team}:${letter.uuid}` : `record:${letter.source}:${letter.end}`;
}

export class DeadLetterStore {
  private readonly table: Table<DeadLetter, string>;
  /** `team:uuid` of every event set aside (few; read once at open). */
  private readonly events = new Set<string>();
  private readonly reasons = new Map<string, number>();
  private readonly counted = new Set<string>();
  /** Per reason, how many samples of dropped events were kept (the next one's slot). */
  private readonly sampled = new Map<string, number>();

  constructor(env: Env) {
    this.table = openJsonTable(env, 'dead_letters');
    for (const { key, value } of this.table.getRange({})) {
      if (value.kind === 'dropped') {
        this.sampled.set(value.reason, Math.max(this.sampled.get(value.reason) ?? 0, value.end + 1));
        continue;
      }
      this.counted.add(key);
      this.remember(value);
    }
  }

  /**
   * A sample of a dropped event (only inside a write transaction): written in the next slot of its reason, replacing
   * the oldest when every slot is used.
   */
  sample(letter: Omit<DeadLetter, 'kind' | 'end'>): void {
    const n = this.sampled.get(letter.reason) ?? 0;
    this.sampled.set(letter.reason, n + 1);
    const full: DeadLetter = { ...letter, kind: 'dropped', end: n };
    this.table.put(keyOf(full), full);
  }

  /** Every entry, samples included, for `GET /_dead_letters`. */
  list(): DeadLetter[] {
    return Array.from(this.table.getRange({}), ({ value }) => value);
  }

  /** True when this event was set aside before (a replayed record must not try it again). */
  has(team: number, uuid: string): boolean {
    return this.events.size > 0 && this.events.has(`${team}:${uuid}`);
  }

  /** Only inside a write transaction of the environment; tell `committed` once that transaction has committed. */
  write(letter: DeadLetter): void {
    const key = keyOf(letter);
    if (this.table.get(key) === undefined) this.table.put(key, letter);
  }

  /** The letters written by a transaction that has now committed (until then they are not counted or skipped). */
  committed(letters: readonly DeadLetter[]): void {
    for (const letter of letters) {
      const key = keyOf(letter);
      if (this.counted.has(key)) continue;
      this.counted.add(key);
      this.remember(letter);
    }
  }

  stats(): { stored: number; reasons: Record<string, number> } {
    let stored = 0;
    for (const n of this.reasons.values()) stored += n;
    return { stored, reasons: Object.fromEntries(this.reasons) };
  }

  private remember(letter: DeadLetter): void {
    if (letter.kind === 'event') this.events.add(`${letter.team}:${letter.uuid}`);
    this.reasons.set(letter.reason, (this.reasons.get(letter.reason) ?? 0) + 1);
  }
}
