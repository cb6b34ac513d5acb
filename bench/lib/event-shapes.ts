/**
 * What the benchmark sends: events shaped like posthog-node's batches (`{api_key, batch: [{event, distinct_id,
 * properties, type, library, library_version, timestamp, uuid}], sent_at}`), about 400 bytes each, spread over
 * many distinct ids, every uuid unique. The property sets are built here once and handed to the wrk Lua scripts
 * too, so the Lua generator and the Node drivers send the same shapes.
 */
import { randomBytes } from 'node:crypto';

export const EVENT_NAMES = ['$pageview', 'button_clicked', 'signed_up', 'purchase_completed', '$autocapture', 'video_played', 'search_performed', '$pageleave'];
/** Distinct ids the generated events are spread over (each becomes a person). */
export const DISTINCT_IDS = 50_000;
export const LIB = '"type":"capture","library":"posthog-node","library_version":"5.70.0"';

const PATHS = ['/', '/pricing', '/products/12345', '/blog/how-we-ship', '/checkout/cart', '/account/settings', '/docs/getting-started', '/search'];
const PLANS = ['free', 'starter', 'pro', 'enterprise'];
const SOURCES = ['newsletter', 'google', 'twitter', 'partner', 'direct'];

/**
 * `count` property sets as JSON object *contents* (no braces). One in eight also updates the person (`$set`),
 * as identify-style server events do.
 */
export function propertyFragments(count = 64): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const path = PATHS[i % PATHS.length]!;
    const props: Record<string, unknown> = {
      $lib: 'posthog-node',
      $lib_version: '5.70.0',
      $geoip_disable: true,
      $current_url: `https://example.com${path}?utm_source=${SOURCES[i % SOURCES.length]}`,
      $pathname: path,
      plan: PLANS[i % PLANS.length],
      cart_value: Math.round((i * 37.3) % 500 * 100) / 100,
      items: i % 7,
    };
    if (i % 8 === 0) props.$set = { plan: PLANS[(i / 8) % PLANS.length], last_seen_source: SOURCES[i % SOURCES.length] };
    out.push(JSON.stringify(props).slice(1, -1));
  }
  return out;
}

/** A fresh 8-hex-digit prefix: together with a counter it makes uuids unique across rounds and runs. */
export function runPrefix(): string {
  return randomBytes(4).toString('hex');
}

/** A syntactically valid v4-shaped uuid from a run prefix and a counter (< 2^48). */
export function uuidOf(prefix: string, counter: number): string {
  return `${prefix}-0000-4000-8000-${counter.toString(16).padStart(12, '0')}`;
}

/** Generates events like the Lua scripts do (for the Node-side drivers). */
export class EventFactory {
  private readonly fragments = propertyFragments();
  private counter = 0;
  readonly prefix = runPrefix();

  constructor(private readonly distinctIds = DISTINCT_IDS) {}

  event(timestamp: string): string {
    const f = this.fragments[(Math.random() * this.fragments.length) | 0]!;
    const name = EVENT_NAMES[(Math.random() * EVENT_NAMES.length) | 0]!;
    const id = 1 + ((Math.random() * this.distinctIds) | 0);
    const uuid = uuidOf(this.prefix, ++this.counter);
    return `{"event":"${name}","distinct_id":"user-${id}","properties":{${f}},${LIB},"timestamp":"${timestamp}","uuid":"${uuid}"}`;
  }

  batchBody(apiKey: string, events: number): string {
    const ts = new Date().toISOString();
    const parts: string[] = [];
    for (let i = 0; i < events; i++) parts.push(this.event(ts));
    return `{"api_key":"${apiKey}","batch":[${parts.join(',')}],"sent_at":"${ts}"}`;
  }

  captureBody(apiKey: string): string {
    const e = this.event(new Date().toISOString());
    return `{"api_key":"${apiKey}",${e.slice(1)}`;
  }

  get generated(): number {
    return this.counter;
  }
}
