/**
 * The analytics benchmark's and differential tests' dataset: a deterministic (seeded) month of a product's events,
 * generated a day at a time so ten million events never sit in memory at once.
 *
 * Shape: `persons` people over `days` days ending at `end` (UTC). Each person has one or two devices, each with an
 * anonymous distinct id. A visit is pageviews of `$current_url` (50 paths), autocapture clicks, sometimes a
 * `signed_up` (which identifies the device as `user-<n>`: a `$identify` with `$anon_distinct_id`, after which that
 * device sends as the user) and, for signed-up people, `purchase` events with a numeric `price`. A person with two
 * devices who signed up logs in on the second device too, which merges the second device's person into the first
 * (their distinct ids often hash to different shards). Every event carries `$browser`, `$os`, `$session_id` and a
 * `$set` of the person's `plan` (so a person's plan is the same on every one of its events, whatever order shards
 * apply merges in); a third of events carry `$groups: {company}`.
 *
 * Alongside each event the generator yields the reference row the comparisons need: the event's device and the
 * fields DuckDB reads. Which person a device's events belong to is known only at the end (a device identified on
 * a later day joins its person retroactively; one never identified stays a person of its own): `personOfDevice`
 * answers once every day was generated.
 */

export interface DatasetOptions {
  events: number;
  persons: number;
  days: number;
  /** The instant the dataset ends (exclusive), ms. */
  end: number;
  seed: number;
}

export const DEFAULT_DATASET: DatasetOptions = {
  events: 10_000_000,
  persons: 300_000,
  days: 30,
  end: Date.UTC(2026, 10, 1),
  seed: 20261123,
};

export interface ReferenceRow {
  ts: number;
  event: string;
  distinctId: string;
  /** person number * 2 + device number */
  device: number;
  browser: string;
  url: string | null;
  session: string;
  price: number | null;
  plan: string;
  company: string | null;
  /** `$elements_chain` of an autocapture event. */
  chain: string | null;
}

export interface CaptureEvent {
  event: string;
  distinct_id: string;
  timestamp: string;
  uuid: string;
  properties: Record<string, unknown>;
}

/** mulberry32: small, fast, seedable. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The vocabularies, also used by the ClickHouse generator of the same shape (bench/lib/clickhouse-direct-dataset.ts). */
export const BROWSERS = ['Chrome', 'Chrome', 'Chrome', 'Safari', 'Safari', 'Firefox', 'Edge'];
export const OSES = ['Mac OS X', 'Windows', 'Windows', 'iOS', 'Android', 'Linux'];
export const PLANS = ['free', 'free', 'free', 'pro', 'pro', 'enterprise'];
export const PATHS = Array.from({ length: 50 }, (_, i) => (i === 0 ? '/' : i < 10 ? `/docs/page-${i}` : i < 30 ? `/blog/post-${i}` : `/app/view-${i}`));
export const CHAINS = [
  'button.btn.btn-primary:nth-child="1"nth-of-type="1"text="Sign up";div.hero:nth-child="2"nth-of-type="1";body:nth-child="1"nth-of-type="1"',
  'a.nav-link:href="/pricing"nth-child="3"nth-of-type="3"text="Pricing";nav:nth-child="1"nth-of-type="1";body:nth-child="1"nth-of-type="1"',
  'button:nth-child="1"nth-of-type="1"text="Buy now";form.checkout:attr__id="checkout"nth-child="4"nth-of-type="1";body:nth-child="1"nth-of-type="1"',
];

/** A deterministic uuid-shaped id from a counter (v7-like layout: time-ordered prefix, so applies stay cheap). */
function uuidOf(ts: number, n: number): string {
  const hex = (v: number, w: number) => v.toString(16).padStart(w, '0').slice(-w);
  const t = hex(ts, 12);
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${hex(n >>> 20, 3)}-8${hex((n >>> 8) & 0xfff, 3)}-${hex(n, 12)}`;
}

interface PersonState {
  devices: number;
  browser: string[];
  os: string[];
  plan: string;
  company: string | null;
  /** Per device: identified as the user yet. */
  identified: boolean[];
  signedUp: boolean;
}

/**
 * Yields the dataset day by day: each day's events in time order with their reference rows. Event counts per day
 * follow a weekly pattern; the total is `events` (within rounding).
 */
export class Dataset {
  private persons: PersonState[] = [];
  constructor(readonly opts: DatasetOptions) {}

  /** The final person of a device's events: its person number if it was identified, else its own number. */
  personOfDevice(device: number): number {
    const person = this.persons[device >> 1];
    if (!person) throw new Error('personOfDevice before the dataset was generated');
    return person.identified[device & 1] ? device >> 1 : this.opts.persons + device;
  }

  *days(): Generator<{ events: CaptureEvent[]; rows: ReferenceRow[] }> {
    yield* generateDays(this.opts, (persons) => (this.persons = persons));
  }
}

function* generateDays(opts: DatasetOptions, keep: (persons: PersonState[]) => void): Generator<{ events: CaptureEvent[]; rows: ReferenceRow[] }> {
  const rand = prng(opts.seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const persons: PersonState[] = [];
  for (let p = 0; p < opts.persons; p++) {
    const devices = rand() < 0.3 ? 2 : 1;
    persons.push({
      devices,
      browser: Array.from({ length: devices }, () => pick(BROWSERS)),
      os: Array.from({ length: devices }, () => pick(OSES)),
      plan: pick(PLANS),
      company: rand() < 0.4 ? `company-${Math.floor(rand() * 2000)}` : null,
      identified: new Array<boolean>(devices).fill(false),
      signedUp: false,
    });
  }
  keep(persons);
  const start = opts.end - opts.days * 86_400_000;
  const weights = Array.from({ length: opts.days }, (_, d) => (new Date(start + d * 86_400_000).getUTCDay() % 6 === 0 ? 0.6 : 1));
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  let serial = 0;
  let remaining = opts.events;
  for (let day = 0; day < opts.days; day++) {
    const target = day === opts.days - 1 ? remaining : Math.round((opts.events * weights[day]!) / totalWeight);
    const dayStart = start + day * 86_400_000;
    const pending: { ev: CaptureEvent; row: ReferenceRow }[] = [];
    while (pending.length < target) {
      const p = Math.floor(rand() * opts.persons);
      const person = persons[p]!;
      const device = person.devices === 2 && rand() < 0.4 ? 1 : 0;
      const session = `s-${p}-${device}-${day}-${Math.floor(rand() * 1e6)}`;
      let t = dayStart + Math.floor(rand() * (86_400_000 - 3_600_000));
      const visit = 2 + Math.floor(rand() * 6);
      for (let k = 0; k < visit && pending.length < target; k++) {
        const userId = `user-${p}`;
        const anonId = `anon-${p}-${device}`;
        const distinctId = person.identified[device] ? userId : anonId;
        const roll = rand();
        let event = '$pageview';
        let price: number | null = null;
        let url: string | null = null;
        const props: Record<string, unknown> = {
          $browser: person.browser[device], $os: person.os[device], $session_id: session, $lib: 'web',
          $set: { plan: person.plan },
        };
        if (person.company !== null && (p + k) % 3 === 0) props.$groups = { company: person.company };
        if (roll < 0.6) {
          url = `https://example.com${pick(PATHS)}`;
          props.$current_url = url;
        } else if (roll < 0.8) {
          event = '$autocapture';
          props.$event_type = 'click';
          props.$elements_chain = pick(CHAINS);
        } else if (roll < 0.88 && !person.signedUp) {
          event = 'signed_up';
          person.signedUp = true;
        } else if (roll < 0.95 && person.signedUp) {
          event = 'purchase';
          price = Math.round(rand() * 20_000) / 100;
          props.price = price;
        } else {
          event = '$pageleave';
        }
        const push = (name: string, id: string, extra: Record<string, unknown>) => {
          const ev: CaptureEvent = { event: name, distinct_id: id, timestamp: new Date(t).toISOString(), uuid: uuidOf(t, serial++), properties: { ...props, ...extra } };
          pending.push({
            ev,
            row: {
              ts: t, event: name, distinctId: id, device: p * 2 + device, browser: person.browser[device]!, url: (ev.properties.$current_url as string | undefined) ?? null,
              session, price: (ev.properties.price as number | undefined) ?? null, plan: person.plan, company: ev.properties.$groups ? person.company : null,
              chain: (ev.properties.$elements_chain as string | undefined) ?? null,
            },
          });
        };
        push(event, distinctId, {});
        // Signing up identifies this device; a signed-up person's other device logs in on a later visit.
        if (event === 'signed_up' || (person.signedUp && !person.identified[device] && rand() < 0.5)) {
          t += 1000;
          // Only an identify that is sent identifies: the day may be full.
          if (pending.length < target) {
            const extra: Record<string, unknown> = { $anon_distinct_id: anonId };
            delete props.$current_url;
            delete props.$event_type;
            delete props.$elements_chain;
            delete props.price;
            push('$identify', userId, extra);
            person.identified[device] = true;
          }
        }
        t += 5_000 + Math.floor(rand() * 120_000);
        if (t >= dayStart + 86_400_000) break;
      }
    }
    pending.sort((a, b) => a.row.ts - b.row.ts);
    remaining -= pending.length;
    yield { events: pending.map((x) => x.ev), rows: pending.map((x) => x.row) };
  }
}
