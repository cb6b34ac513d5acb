/**
 * Flag change propagation: a PATCH answers only after every worker has reloaded the flag (src/README.md, "Flags"), so
 * its latency *is* the propagation time. Measured over alternating rollouts (0% / 100%); right after each PATCH
 * returns, a burst of concurrent `/flags/` requests (spread over the workers) must all see the new value.
 */
import type { BenchContext, CaseResult } from '../lib/context.js';
import { PERSON_DISTINCT_ID } from '../lib/flag-fixtures.js';
import { percentile, round2 } from '../lib/proc-stats.js';

const KEY = 'bench-propagation';
const CHANGES = 20;
const BURST = 64;


export async function runPropagation(ctx: BenchContext): Promise<CaseResult> {
  const FF = '/api/projects/@current/feature_flags/';
  const created = await ctx.api.api('POST', FF, { key: KEY, name: 'Propagation probe', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } });
  if (created.status !== 201) throw new Error(`creating ${KEY} failed: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id as number;

  const patchMs: number[] = [];
  let stale = 0;
  let checked = 0;
  for (let i = 1; i <= CHANGES; i++) {
    const expected = i % 2 === 1;
    const t0 = performance.now();
    const res = await ctx.api.api('PATCH', `${FF}${id}/`, { filters: { groups: [{ properties: [], rollout_percentage: expected ? 100 : 0 }] } });
    if (res.status !== 200) throw new Error(`PATCH ${KEY} failed: ${res.status} ${JSON.stringify(res.body)}`);
    patchMs.push(performance.now() - t0);
    const answers = await Promise.all(Array.from({ length: BURST }, () => ctx.api.flags(PERSON_DISTINCT_ID)));
    checked += answers.length;
    stale += answers.filter((f) => f[KEY] !== expected).length;
  }
  patchMs.sort((a, b) => a - b);
  const notes = [
    `${CHANGES} PATCHes (rollout 0% <-> 100%) with ${ctx.quill.workers} workers, server otherwise idle`,
    `p50/p99 are PATCH latencies = time until every worker answers the new value`,
    `${stale} of ${checked} /flags/ answers right after the PATCH returned were stale (expected 0)`,
  ];
  return {
    case: 'flag_propagation',
    connections: BURST,
    duration_s: null,
    requests_s: null,
    p50_ms: round2(percentile(patchMs, 50)),
    p99_ms: round2(percentile(patchMs, 99)),
    ratio_to_baseline: null,
    ...ctx.footprint(),
    notes: notes.join('; '),
    max_ms: round2(patchMs[patchMs.length - 1]!),
    stale_answers: stale,
    checked_answers: checked,
  };
}
