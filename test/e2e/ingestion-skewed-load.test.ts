// A skewed load: one distinct id sends most events, so one shard (one worker) owns nearly all of
// them. Every acknowledged event must be applied once, and each sender's events of that distinct id in the order
// it sent them — across the large chunks the apply takes while catching up on a deep backlog (built here with the
// apply paused) and the small ones it takes while requests keep arriving.
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { allEvents, event, personOf, sendBatch } from '../helpers/ingest.js';
import { PERSONAL_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2, env: { QUILL_FAULT_INJECTION: '1' } });

const BUSY = 'busy-visitor';
const LANES = 8;
const PER_REQUEST = 100;
/**
 * Requests per lane with the apply paused (a backlog of 20,000 events, 18,000 of them the busy distinct id's: the
 * apply catches up in its largest chunks, src/worker/ingest/shard.ts), then while it runs.
 */
const PAUSED_REQUESTS = 25;
const LIVE_REQUESTS = 5;

async function fault(kind: 'pause-apply' | 'resume-apply'): Promise<void> {
  const res = await fetch(`${server.q.base}/_fault/${kind}`, { method: 'POST', headers: { authorization: `Bearer ${PERSONAL_KEY}` } });
  if (res.status !== 200) throw new Error(`${kind}: ${res.status}`);
}

/**
 * One sender: requests one after the other, each acknowledged before the next; nine events in ten are the busy
 * distinct id's. Event `seq` of a lane sets `at_<lane>_<seq>` and unsets `at_<lane>_<seq - 1>`: applied in order,
 * the person ends with one such key per lane, the last; if any event were applied before its predecessor, the
 * predecessor's key would stay (its unset came first). It also sets `lane_<lane>` and `$set_once` `first_<lane>`.
 */
async function lane(lane: number, requests: number, from: number, sent: Set<string>): Promise<number> {
  let seq = from;
  for (let r = 0; r < requests; r++) {
    const batch = [];
    for (let i = 0; i < PER_REQUEST; i++) {
      const e = i % 10 === 9
        ? event(`other-${lane}-${r}-${i}`, 'other')
        : event(BUSY, 'step', {
          lane, seq, $set: { [`lane_${lane}`]: seq, [`at_${lane}_${seq}`]: true }, $set_once: { [`first_${lane}`]: seq },
          ...(seq > 0 ? { $unset: [`at_${lane}_${seq - 1}`] } : {}),
        });
      if (e.distinct_id === BUSY) seq++;
      sent.add(e.uuid);
      batch.push(e);
    }
    const res = await sendBatch(server.q.base, batch);
    if (res.status !== 200) throw new Error(`lane ${lane}: batch answered ${res.status}`);
  }
  return seq;
}

t.test('one distinct id sending most events: applied completely, once, and in each sender\'s order', async (t) => {
  const sent = new Set<string>();
  await fault('pause-apply');
  const afterPaused = await Promise.all(Array.from({ length: LANES }, (_, l) => lane(l, PAUSED_REQUESTS, 0, sent)));
  await fault('resume-apply');
  const last = await Promise.all(afterPaused.map((from, l) => lane(l, LIVE_REQUESTS, from, sent)));

  // The API's own wait for the apply is bounded (10 s); on a loaded machine this backlog may take longer.
  await eventually('the backlog applied', async () => {
    const res = await server.api.get('/_stats');
    return res.status === 200 && (res.body.shards as { backlog: number }[]).every((s) => s.backlog === 0);
  }, { timeoutMs: 300_000, intervalMs: 250 });
  const stored = await allEvents(server.api, 'after=2000-01-01T00:00:00Z');
  const uuids = stored.map((e) => e.id as string);
  t.equal(uuids.length, sent.size, 'as many events stored as acknowledged');
  t.equal(new Set(uuids).size, uuids.length, 'each once');
  t.ok(uuids.every((u) => sent.has(u)), 'exactly the acknowledged ones');

  const busy = stored.filter((e) => e.distinct_id === BUSY);
  t.equal(busy.length, LANES * (PAUSED_REQUESTS + LIVE_REQUESTS) * PER_REQUEST * 0.9, 'nine in ten belong to the busy distinct id');
  const person = await personOf(server.api, BUSY);
  for (let l = 0; l < LANES; l++) {
    t.same(Object.keys(person.properties).filter((k) => k.startsWith(`at_${l}_`)), [`at_${l}_${last[l]! - 1}`], `lane ${l}: every event applied after its predecessor`);
    t.equal(person.properties[`lane_${l}`], last[l]! - 1, `lane ${l}: its last event was applied last`);
    t.equal(person.properties[`first_${l}`], 0, `lane ${l}: its first event was applied first`);
  }
});
