// Pure flag evaluation, no HTTP and no store (`node dist/bench/flag-eval.bench.js`): the engine's cost per
// request for the bench fixture (the 50 and 5 flags and the 20-property person of `npm run bench`), with and
// without building the /flags/?v=2 answer text. Prints one JSON document. The same-run baseline is the cost of
// building the evaluation context alone (what every evaluation does before the engine runs).
import { compileFlagSet, evaluateFlags, type EvaluationContext, type FlagRecord } from '../src/domain/flags/index.js';
import { flagMembersJson } from '../src/worker/ops/flags-response.js';
import { flagDefinitions, PERSON_DISTINCT_ID, PERSON_PROPERTIES } from './lib/flag-fixtures.js';

const ROUNDS = Number(process.env.QUILL_BENCH_ROUNDS ?? 200_000);

function records(count: number): FlagRecord[] {
  return flagDefinitions(count).map((d, i) => ({
    id: i + 1, key: d.key, name: d.name, active: true, deleted: false, filters: d.filters,
    ensure_experience_continuity: false, version: 1,
  }));
}

function context(i: number): EvaluationContext {
  // A different distinct id per round, so rollout hashes are not all the same input.
  const distinctId = i === 0 ? PERSON_DISTINCT_ID : `${PERSON_DISTINCT_ID}-${i}`;
  return {
    distinctId,
    // As /flags/ gives them: posthog-node's person_properties over the stored person's.
    personProperties: { distinct_id: distinctId },
    storedPersonProperties: PERSON_PROPERTIES,
    groups: {},
    groupProperties: {},
    hashKeyOverrides: {},
    staticCohortIds: new Set(),
    now: new Date(),
  };
}

/** Runs `fn` ROUNDS times after a warm-up; returns microseconds per call. */
function time(fn: (i: number) => unknown): number {
  let sink = 0;
  for (let i = 0; i < ROUNDS / 10; i++) sink ^= fn(i) ? 1 : 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ROUNDS; i++) sink ^= fn(i) ? 1 : 0;
  const us = Number(process.hrtime.bigint() - t0) / 1000 / ROUNDS;
  if (sink === 2) console.error('unreachable');
  return Math.round(us * 100) / 100;
}

const out: Record<string, unknown> = { bench: 'flag evaluation (pure)', rounds: ROUNDS, node: process.version };
out.baseline_us = { build_context: time((i) => context(i)) };
for (const count of [50, 5]) {
  const set = compileFlagSet(records(count), [], {});
  out[`flags_${count}`] = {
    evaluate_us: time((i) => evaluateFlags(set, context(i)).length),
    evaluate_and_answer_us: time((i) => flagMembersJson(evaluateFlags(set, context(i)), 'details').length),
  };
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
