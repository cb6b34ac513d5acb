/**
 * Differential by construction (issue 33): a client for a suite's local Quill that asks every analysis it is asked
 * of a second Quill too, one answering from ClickHouse (`QUILL_ANALYTICS=clickhouse`, test/helpers/two-engines.ts)
 * and fed the same events, and keeps that answer. A suite written against the local engine then runs every case
 * through the ClickHouse executors without a line of its own. `report` restarts the second Quill on its local
 * engine and asks everything again: each ClickHouse answer must equal the local engine's on the same data, and
 * where the ClickHouse executor does not compute the question yet, the answer must name its fallback (counted and
 * listed, so the gaps stay visible).
 */
import { Client, type HttpResult } from './quill.js';
import { nearlyEqual } from './insight-compare.js';

/**
 * Requests that are analyses (compared): insights, `/query/`, and the persons behind a point; everything else the
 * suite sends is set-up or reference data.
 */
const ANALYSIS = /^\/api\/projects\/[^/]+\/(insights\/|query\/|persons\/(trends|stickiness|lifecycle|retention|funnel|path)\/)/;
/** Fields that say how or when an answer was made, not what it is. */
const CIRCUMSTANCES = new Set(['clickhouse', 'clickhouse_export', 'last_refresh', 'is_cached', 'timings', 'cache_key', 'query_status', 'next_allowed_client_refresh', 'cache_target_age']);

export interface MirroredAnswer {
  /** The project's time zone when it was asked. */
  zone: string;
  method: string;
  path: string;
  body: unknown;
  /** The request, as a reader names it. */
  request: string;
  /** The Quill on ClickHouse's answer (its essence, or the status and body of an error). */
  onClickHouse: unknown;
  /** The reason the Quill on ClickHouse gave for answering on its local engine (null: ClickHouse computed it). */
  fallback: string | null;
}

export class ExecutorMirror extends Client {
  readonly answers: MirroredAnswer[] = [];
  private zone = 'UTC';

  constructor(local: Client, readonly twin: Client) {
    super(local.base, local.key);
  }

  override async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult<T>> {
    const analysis = ANALYSIS.test(path);
    // Reads of set-up state (persons pages, /_stats) are the local Quill's alone.
    if (method === 'GET' && !analysis) return super.request<T>(method, path, body, headers);
    const [mine, theirs] = await Promise.all([super.request<T>(method, path, body, headers), this.twin.request(method, path, body, headers)]);
    if (analysis) {
      this.record(method, path, body, theirs);
      return mine;
    }
    // A change (the project's time zone, an action): made on both, or the comparison would be of two projects.
    if (theirs.status !== mine.status) throw new Error(`${method} ${path}: ${mine.status} locally, ${theirs.status} on the ClickHouse Quill: ${theirs.text}`);
    // What the suite creates (an action) it names by the local id in its analyses: the same on both.
    const id = (r: HttpResult) => (r.body as { id?: unknown } | null)?.id;
    if (id(theirs) !== id(mine)) throw new Error(`${method} ${path}: id ${String(id(mine))} locally, ${String(id(theirs))} on the ClickHouse Quill`);
    const zone = (body as { timezone?: unknown } | undefined)?.timezone;
    if (typeof zone === 'string') this.zone = zone;
    return mine;
  }

  private record(method: string, path: string, body: unknown, theirs: HttpResult): void {
    const where = (theirs.body as { clickhouse?: { fallback?: unknown } } | null)?.clickhouse;
    this.answers.push({
      zone: this.zone, method, path, body, request: `${method} ${describe(path, body)}`,
      onClickHouse: answerOf(theirs, this.twin.base),
      fallback: where === undefined ? 'the answer does not say which executor made it' : typeof where.fallback === 'string' ? where.fallback : null,
    });
  }

  /**
   * Waits until the ClickHouse Quill's export has everything it was sent: a trend it computes says so
   * (`clickhouse_export.caught_up`), each ask waiting up to its own bound.
   */
  async exportCaughtUp(): Promise<void> {
    for (let tries = 0; ; tries++) {
      const res = await this.twin.get('/api/projects/@current/insights/trend/?refresh=true&events=%5B%7B%22id%22%3Anull%7D%5D');
      if (res.status === 200 && res.body.clickhouse_export?.caught_up === true) return;
      if (tries >= 20) throw new Error(`the ClickHouse export did not catch up: ${res.status} ${res.text.slice(0, 500)}`);
    }
  }

  /**
   * Asks the Quill on ClickHouse again, in each of `zones`, every analysis the suite asked in another zone only (its
   * reference SQL may be written for one zone; the executors must agree in all).
   */
  private async askInEveryZone(zones: readonly string[]): Promise<void> {
    const asked = [...this.answers];
    for (const zone of zones) {
      this.zone = zone;
      await this.twin.patch('/api/projects/@current/', { timezone: zone });
      const here = new Set(asked.filter((a) => a.zone === zone).map((a) => a.request));
      for (const a of asked) {
        if (here.has(a.request)) continue;
        here.add(a.request);
        this.record(a.method, a.path, a.body, await this.twin.request(a.method, a.path, a.body));
      }
    }
  }

  /**
   * One assertion per mirrored answer: the Quill on ClickHouse's answer equals its local engine's on the same data
   * (`restartOnLocalEngine`, test/helpers/two-engines.ts); a fallback answer was made by that local engine already,
   * so it is compared too. The fallbacks are counted per zone and listed with their reasons.
   */
  async report(tt: Tap.Test, zones: readonly string[], restartOnLocalEngine: () => Promise<Client>): Promise<void> {
    await this.askInEveryZone(zones);
    tt.ok(this.answers.length > 0, 'analyses were mirrored');
    const reference = await restartOnLocalEngine();
    for (const zone of zones) {
      tt.equal((await reference.patch('/api/projects/@current/', { timezone: zone })).status, 200, `${zone}: the local engine's time zone`);
      for (const a of this.answers.filter((x) => x.zone === zone)) {
        const local = answerOf(await reference.request(a.method, a.path, a.body), reference.base);
        const name = `${zone}: ${a.request}${a.fallback === null ? '' : ` (fallback: ${a.fallback})`}`;
        // Equal within float rounding, or the whole difference shown.
        if (sameWithin(a.onClickHouse, local)) tt.pass(name);
        else tt.same(a.onClickHouse, local, name);
      }
    }
    for (const zone of zones) {
      const inZone = this.answers.filter((a) => a.zone === zone);
      const computed = inZone.filter((a) => a.fallback === null);
      tt.comment(`${zone}: ${inZone.length} analyses, ${computed.length} computed on ClickHouse, ${inZone.length - computed.length} answered locally`);
      const byReason = new Map<string, string[]>();
      for (const a of inZone) if (a.fallback !== null) byReason.set(a.fallback, [...(byReason.get(a.fallback) ?? []), a.request]);
      for (const [reason, requests] of byReason) tt.comment(`  fallback "${reason}" (${requests.length}): ${requests.join('; ')}`);
    }
  }
}

/** What an answer from the Quill at `base` says: its essence when it answered 200, else its status and body. */
function answerOf(res: HttpResult, base: string): unknown {
  return res.status === 200 ? essence(res.body, base) : { status: res.status, body: res.body };
}

/** A request as a reader names it: the endpoint and its parameters, minus the ones every case repeats. */
function describe(path: string, body: unknown): string {
  const url = new URL(path, 'http://x');
  url.searchParams.delete('refresh');
  const params = [...url.searchParams].map(([k, v]) => `${k}=${v}`).join('&');
  return `${url.pathname.replace(/^\/api\/projects\/[^/]+\//, '')}${params ? `?${params}` : ''}${body === undefined ? '' : ` ${JSON.stringify(body)}`}`;
}

/** What an answer says, without how or when it was made, and its Quill's own address (in links) as `{base}`. */
export function essence(value: unknown, base: string): unknown {
  if (typeof value === 'string') return value.split(base).join('{base}');
  if (Array.isArray(value)) return value.map((v) => essence(v, base));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!CIRCUMSTANCES.has(k)) out[k] = essence(v, base);
    return out;
  }
  return value;
}

/**
 * Deep equality, numbers within a relative 1e-9: the executors add the same numbers in different orders (an
 * average of conversion times differs in its 16th digit), which is rounding, not a different answer.
 */
export function sameWithin(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return nearlyEqual(a, b);
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameWithin(x, b[i]));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameWithin((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}
