// Flags first (issue 55): while a worker answers flag requests, the front lets only a few ingestion requests into it
// and holds the rest, already read (src/front/ingestion-gate.ts). Held is never lost: flags asked without pause
// from several connections beside many concurrent /batch/ requests, every batch is acknowledged, every acknowledged
// event is stored exactly once, every flag answer is right, and /metrics shows requests that waited in the front.
import t from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const METRICS_TOKEN = 'flags-beside-ingestion-metrics';
const server = quillForFile(t, { workers: 2, env: { QUILL_METRICS_TOKEN: METRICS_TOKEN } });

const FLAG_CONNECTIONS = 4;
const BATCH_CONNECTIONS = 24;
const BATCHES_PER_CONNECTION = 6;
const EVENTS_PER_BATCH = 50;
const MAX_ROUNDS = 3;

async function heldTotal(base: string): Promise<number> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`/metrics: ${res.status} ${text}`);
  let sum = 0;
  for (const m of text.matchAll(/^quill_ingestion_requests_held_total\{[^}]*\} (\d+)/gm)) sum += Number(m[1]);
  return sum;
}

/** One round: flags asked without pause from FLAG_CONNECTIONS loops while the batches are sent; what each saw. */
async function round(base: string, n: number) {
  let sending = true;
  const flagAnswers: { status: number; enabled: unknown }[] = [];
  const ask = async (c: number) => {
    for (let i = 0; sending; i++) {
      const res = await fetch(`${base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: `asker-${c}-${i}` }) });
      const body = await res.json() as { flags?: Record<string, { enabled: boolean }> };
      flagAnswers.push({ status: res.status, enabled: body.flags?.['always-on']?.enabled });
    }
  };
  const acked: string[] = [];
  const statuses: number[] = [];
  const send = async (c: number) => {
    for (let b = 0; b < BATCHES_PER_CONNECTION; b++) {
      const batch = Array.from({ length: EVENTS_PER_BATCH }, (_, i) => event(`sender-${n}-${c}`, 'beside', { i }));
      const res = await sendBatch(base, batch);
      statuses.push(res.status);
      if (res.status === 200) acked.push(...batch.map((e) => e.uuid as string));
    }
  };
  const askers = Array.from({ length: FLAG_CONNECTIONS }, (_, c) => ask(c));
  // The flag loops are under way before the first batch.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await Promise.all(Array.from({ length: BATCH_CONNECTIONS }, (_, c) => send(c)));
  sending = false;
  await Promise.all(askers);
  return { acked, statuses, flagAnswers };
}

t.test(`flags asked without pause beside ${BATCH_CONNECTIONS} concurrent /batch/ senders: nothing held is lost, some ingestion waits in the front (at most ${MAX_ROUNDS} rounds of load)`, async (t) => {
  const { q, api } = server;
  const flag = await api.post('/api/projects/@current/feature_flags/', { key: 'always-on', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  t.equal(flag.status, 201);
  const acked: string[] = [];
  let held = 0;
  let rounds = 0;
  // Whether a request waits depends on how the two loads interleave on the machine; the loss checks hold for every
  // round whatever happened.
  while (rounds < MAX_ROUNDS && held === 0) {
    const r = await round(q.base, rounds);
    rounds++;
    t.same([...new Set(r.statuses)], [200], `round ${rounds}: every batch acknowledged (${r.statuses.length})`);
    t.ok(r.flagAnswers.length >= FLAG_CONNECTIONS, `round ${rounds}: flags answered meanwhile (${r.flagAnswers.length})`);
    t.same(r.flagAnswers.filter((a) => a.status !== 200 || a.enabled !== true), [], `round ${rounds}: every flag answer 200 with the flag on`);
    acked.push(...r.acked);
    held = await heldTotal(q.base);
  }
  t.ok(held > 0, `ingestion requests waited in the front while flags were asked (${held} in ${rounds} round(s))`);
  t.equal(acked.length, rounds * BATCH_CONNECTIONS * BATCHES_PER_CONNECTION * EVENTS_PER_BATCH);

  // The HogQL API waits for what was acknowledged before it.
  const res = await api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query: "SELECT count(), count(DISTINCT uuid) FROM events WHERE event = 'beside'" } });
  t.equal(res.status, 200, `HogQL answers (${res.status === 200 ? 'ok' : res.text})`);
  t.same(res.body.results[0], [acked.length, acked.length], 'every acknowledged event stored, each once');
  const waiting = await fetch(`${q.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
  const now = [...waiting.matchAll(/^quill_ingestion_requests_held\{[^}]*\} (\d+)/gm)].map((m) => Number(m[1]));
  t.same(now, [0, 0], 'nothing is held once the load is over');
});
