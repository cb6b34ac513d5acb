// Data retention in the scan layout (ScanStore.expireStep) on a real LMDB environment: sealed blocks that are all
// older than the cutoff are dropped whole, blocks that straddle it are rewritten without their old rows (the
// oldest sealed one first, the open block last), and what stays is exactly the newer events.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openEnv, openTable } from '../../src/stores/lmdb-env.js';
import { COL, type ScanEvent } from '../../src/stores/scan/block-builder.js';
import { ColumnCache } from '../../src/stores/scan/column-cache.js';
import { ScanStore, SEAL_EVENTS } from '../../src/stores/scan/scan-store.js';

const TEAM = 7;
const CUTOFF = 1_000_000;

function scanEvent(ts: number, i: number): ScanEvent {
  return { uuid: `e${i}`, ts, event: i % 2 ? 'a' : 'b', distinctId: `d${i % 5}`, personId: (i % 5) + 1, personUuid: '', personCreatedAt: NaN, properties: { i }, personProperties: {}, elementsChain: '' };
}

t.test('expired blocks go whole, straddling ones are rewritten, newer events stay', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quill-scan-retention-'));
  const env = openEnv(join(dir, 'events.mdb'));
  t.teardown(async () => {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = new ScanStore(env, openTable(env, 'state'), new ColumnCache(64 * 1024 * 1024), 0);
  // Block 1: all old. Block 2: old, then new (straddles). Open block: new, then late old arrivals.
  const old1 = Array.from({ length: SEAL_EVENTS }, (_, i) => scanEvent(1000 + i, i));
  const mixed = Array.from({ length: SEAL_EVENTS }, (_, i) => scanEvent(i < SEAL_EVENTS / 4 ? 500_000 + i : CUTOFF + i, i));
  const open = Array.from({ length: 3000 }, (_, i) => scanEvent(i % 3 === 0 ? CUTOFF - 1 - i : CUTOFF + 5_000_000 + i, i));
  for (const chunk of [old1, mixed, open]) {
    for (let i = 0; i < chunk.length; i += 4096) await env.transaction(() => store.append(TEAM, chunk.slice(i, i + 4096)));
  }
  // Another project's old events are not this project's business.
  await env.transaction(() => store.append(TEAM + 1, [scanEvent(10, 0)]));
  t.equal(store.stats().sealedBlocks, 2);
  const expected = [...old1, ...mixed, ...open].filter((e) => e.ts >= CUTOFF).map((e) => e.ts).sort((a, b) => a - b);

  const steps: { removed: number; more: boolean }[] = [];
  for (let more = true; more;) {
    const step = await env.transaction(() => store.expireStep(TEAM, CUTOFF, 16));
    steps.push(step);
    more = step.more;
  }
  t.same(steps, [
    { removed: SEAL_EVENTS, more: true }, // block 1, whole
    { removed: SEAL_EVENTS / 4, more: true }, // block 2 rewritten
    { removed: 1000, more: false }, // the open block rewritten
  ]);
  const kept: number[] = [];
  for (const block of store.blocks(TEAM)) kept.push(...block.f64(COL.ts)!);
  t.same(kept.sort((a, b) => a - b), expected, 'exactly the events at or after the cutoff remain');
  t.equal(store.count(TEAM), expected.length);
  t.equal(store.count(TEAM + 1), 1);
  t.same(await env.transaction(() => store.expireStep(TEAM, CUTOFF, 16)), { removed: 0, more: false }, 'nothing left to do');

  // The open block was made durable too: a store reopened on the environment sees the same layout.
  const reopened = new ScanStore(env, openTable(env, 'state'), new ColumnCache(1024 * 1024), 0);
  t.equal(reopened.count(TEAM), expected.length);
});
