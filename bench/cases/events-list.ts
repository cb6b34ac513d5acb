/**
 * `GET /api/projects/@current/events/?limit=100` (private API). Runs automatically once the endpoint exists;
 * until then the case is reported as skipped with the server's answer.
 */
import type { BenchContext, CaseResult } from '../lib/context.js';
import { PERSONAL_KEY } from '../lib/paths.js';

const PATH = '/api/projects/@current/events/?limit=100';
const CONNECTIONS = 8;

export async function runEventsList(ctx: BenchContext): Promise<CaseResult> {
  const probe = await ctx.api.api('GET', PATH);
  const skipped = (reason: string): CaseResult => ({
    case: 'events_list', connections: CONNECTIONS, duration_s: null, requests_s: null, p50_ms: null, p99_ms: null,
    ratio_to_baseline: null, ...ctx.footprint(), skipped: true, notes: `skipped: ${reason}`,
  });
  if (probe.status === 404) return skipped('the events endpoint answers 404 (not implemented in this build yet)');
  if (probe.status !== 200) return skipped(`the events endpoint answers ${probe.status}: ${JSON.stringify(probe.body).slice(0, 200)}`);
  const results = (probe.body as { results?: unknown[] })?.results;
  const notes = [`first answer: ${Array.isArray(results) ? results.length : '?'} events, ${Math.round(probe.ms)} ms`];
  const load = { kind: 'static', method: 'GET', path: PATH, headers: { Authorization: `Bearer ${PERSONAL_KEY}` } } as const;
  const r = await ctx.measure('events list', load, { connections: CONNECTIONS });
  return ctx.rateCase('events_list', CONNECTIONS, r, notes);
}
