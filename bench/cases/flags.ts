/**
 * `/flags/?v=2` for one stored person with 20 properties, 64 connections: first with 50 active flags (rollouts,
 * person-property conditions, multivariate), then with 5 of them (the other 45 soft-deleted).
 */
import type { BenchContext, CaseResult } from '../lib/context.js';
import { startHelloWorld } from '../lib/server-process.js';
import { PERSON_DISTINCT_ID, READY_FLAG, capturePerson, createFlags, flagDefinitions, waitForPerson, type FlagDefinition } from '../lib/flag-fixtures.js';
import { QuillApi } from '../lib/quill-api.js';

const CONNECTIONS = 64;
const FLAGS = 50;
const FEW_FLAGS = 5;

export interface FlagsFixture {
  ids: Map<string, number>;
}

async function round(ctx: BenchContext, name: string, flagCount: number, extraNotes: string[]): Promise<CaseResult> {
  // Check the answer once before loading: every flag evaluated, the person's properties seen.
  const flags = await ctx.api.flags(PERSON_DISTINCT_ID);
  const notes = [...extraNotes];
  if (Object.keys(flags).length !== flagCount) notes.push(`expected ${flagCount} flags in the answer, got ${Object.keys(flags).length}`);
  if (flags[READY_FLAG] !== true) notes.push('the stored person was not visible to /flags/');
  const body = JSON.stringify(QuillApi.flagsRequest(PERSON_DISTINCT_ID));
  const load = { kind: 'static', method: 'POST', path: '/flags/?v=2', headers: { 'Content-Type': 'application/json' }, body } as const;
  const r = await ctx.measure(name, load, { connections: CONNECTIONS });
  const sameSize = await sameSizeBaseline(ctx, name, await answerBytes(ctx, body));
  return {
    ...ctx.rateCase(name, CONNECTIONS, r, notes),
    same_size_baseline: sameSize,
    ratio_to_same_size_baseline: Math.round((r.requests_s / sameSize.requests_s) * 10_000) / 10_000,
    active_flags: flagCount,
  };
}

/** Bytes of the answer the load gets (the v2 answer grows with the number of flags). */
async function answerBytes(ctx: BenchContext, body: string): Promise<number> {
  const res = await fetch(`${ctx.quill.base}/flags/?v=2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return (await res.arrayBuffer()).byteLength;
}

/**
 * The hello world answering a body as large as the flags answer, same generator and connections: the ceiling
 * loopback and the generator put on an endpoint with answers of that size, whatever the server does.
 */
async function sameSizeBaseline(ctx: BenchContext, label: string, bytes: number) {
  const hello = await startHelloWorld();
  try {
    const load = { kind: 'static', method: 'GET', path: `/?bytes=${bytes}` } as const;
    const sample = { pids: { server: hello.pid, bench: process.pid }, serverPid: hello.pid };
    ctx.log(`${label}: hello world with a ${bytes}-byte body, ${ctx.settings.measureS} s at ${CONNECTIONS} connections`);
    await ctx.gen.run(hello.base, load, { connections: CONNECTIONS, durationS: ctx.settings.warmupS, sample });
    const r = await ctx.gen.run(hello.base, load, { connections: CONNECTIONS, durationS: ctx.settings.measureS, sample });
    return { body_bytes: bytes, requests_s: r.requests_s, p50_ms: r.p50_ms, p99_ms: r.p99_ms };
  } finally {
    await hello.stop();
  }
}

/** The fixture of one Quill: created once, shared by the flags and isolation cases (they run on one server). */
const prepared = new WeakMap<BenchContext, Promise<{ ids: Map<string, number>; defs: FlagDefinition[]; waited: number }>>();

/**
 * Creates the 50 flags and the stored person once per server, and waits until `/flags/` sees the person. The
 * flags case soft-deletes 45 of them afterwards, so cases needing all 50 run before it (bench/run-all.ts).
 */
export function prepareFlags(ctx: BenchContext, active = FLAGS): Promise<{ ids: Map<string, number>; defs: FlagDefinition[]; waited: number; active: number }> {
  let fixture = prepared.get(ctx);
  if (!fixture) {
    fixture = (async () => {
      ctx.log(`flags: creating ${FLAGS} flags and the stored person`);
      const defs = flagDefinitions(FLAGS);
      const ids = await createFlags(ctx.api, defs);
      await capturePerson(ctx.api);
      return { ids, defs, waited: await waitForPerson(ctx.api) };
    })();
    prepared.set(ctx, fixture);
  }
  return fixture.then((f) => ({ ...f, active }));
}

export async function runFlags(ctx: BenchContext): Promise<{ results: CaseResult[]; fixture: FlagsFixture }> {
  const { ids, defs, waited } = await prepareFlags(ctx);
  const kinds = `${defs.filter((d) => d.key.startsWith('bench-rollout')).length} rollouts, ` +
    `${defs.filter((d) => d.key.startsWith('bench-condition') || d.key === READY_FLAG).length} person-property conditions, ` +
    `${defs.filter((d) => d.key.startsWith('bench-experiment')).length} multivariate`;
  const many = await round(ctx, 'flags_50', FLAGS, [kinds, `person with 20 properties visible to /flags/ ${waited} ms after its capture was acknowledged`]);

  // Keep the first five (they cover every kind), soft-delete the rest.
  for (const def of defs.slice(FEW_FLAGS)) {
    const res = await ctx.api.api('PATCH', `/api/projects/@current/feature_flags/${ids.get(def.key)}/`, { deleted: true });
    if (res.status !== 200) throw new Error(`soft-deleting ${def.key} failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const few = await round(ctx, 'flags_5', FEW_FLAGS, [`first ${FEW_FLAGS} of the same flags, the other ${FLAGS - FEW_FLAGS} soft-deleted`]);
  return { results: [many, few], fixture: { ids } };
}
