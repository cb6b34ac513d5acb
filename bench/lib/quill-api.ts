/** The few HTTP calls the bench makes outside the load generator: fixtures, probes, the propagation case. */
import { PERSONAL_KEY, PROJECT_KEY } from './paths.js';

/** A request that gets no answer must fail the case, not hang the bench. */
const TIMEOUT_MS = 30_000;

export interface Answer<T = any> {
  status: number;
  body: T;
  ms: number;
}

export class QuillApi {
  constructor(readonly base: string) {}

  /** Private API call with the personal key. */
  async api<T = any>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
    const t0 = performance.now();
    const res = await fetch(this.base + path, {
      method,
      headers: { authorization: `Bearer ${PERSONAL_KEY}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T, ms };
  }

  /** Public POST with a JSON body (capture, flags). */
  async publicPost<T = any>(path: string, body: unknown): Promise<Answer<T>> {
    const t0 = performance.now();
    const res = await fetch(this.base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as T, ms: performance.now() - t0 };
  }

  /** The request body posthog-node sends to `/flags/?v=2` for a user. */
  static flagsRequest(distinctId: string): Record<string, unknown> {
    return { token: PROJECT_KEY, distinct_id: distinctId, groups: {}, person_properties: { distinct_id: distinctId }, group_properties: {}, geoip_disable: true };
  }

  /** Evaluated flags for a user: key -> value (false, true or a variant). */
  async flags(distinctId: string): Promise<Record<string, unknown>> {
    const res = await this.publicPost<{ featureFlags?: Record<string, unknown> }>('/flags/?v=2', QuillApi.flagsRequest(distinctId));
    if (res.status !== 200 || !res.body?.featureFlags) throw new Error(`/flags/ answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.featureFlags;
  }
}
