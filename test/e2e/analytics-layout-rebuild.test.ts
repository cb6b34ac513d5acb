// The scan layout is derived data: a data directory without it (written before it existed, or of an older layout
// version) gets it rebuilt from the stored rows at start-up, and every analysis answers as before.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sendBatch } from '../helpers/ingest.js';
import { Client, removeDir, startQuill } from '../helpers/quill.js';

const enc = encodeURIComponent;
const questions = [
  { events: [{ id: '$pageview' }], breakdown: '$browser' },
  { events: [{ id: '$pageview', math: 'dau' }] },
  { events: [{ id: 'buy', math: 'sum', math_property: 'price' }] },
  { events: [{ id: null }], properties: [{ key: 'plan', value: 'pro', type: 'person' }] },
];

async function answers(api: Client): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const q of questions) {
    const qs = Object.entries({ ...q, date_from: '2026-11-01', date_to: '2026-11-07', refresh: true }).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
    const res = await api.get(`/api/projects/@current/insights/trend/?${qs}`);
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    out.push(res.body.result.map((s: any) => [s.breakdown_value, s.data]));
  }
  return out;
}

t.test('the layout is rebuilt from the rows and answers the same', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-rebuild-'));
  t.teardown(() => removeDir(dataDir));
  const first = await startQuill({ dataDir });
  const batch = Array.from({ length: 3000 }, (_, i) => ({
    event: i % 4 === 0 ? 'buy' : '$pageview', distinct_id: `u${i % 97}`,
    timestamp: new Date(Date.UTC(2026, 10, 1 + (i % 7), i % 24)).toISOString(),
    properties: { $browser: ['Chrome', 'Safari', 'Edge'][i % 3], price: i % 13, $set: { plan: i % 97 < 30 ? 'pro' : 'free' } },
  }));
  for (let i = 0; i < batch.length; i += 500) t.equal((await sendBatch(first.base, batch.slice(i, i + 500))).status, 200);
  const before = await answers(new Client(first.base));
  t.equal(await first.stop(), 0);

  const rebuilt = await startQuill({ dataDir, env: { QUILL_REBUILD_SCAN_LAYOUT: '1' } });
  t.teardown(() => rebuilt.stop());
  const built = [...rebuilt.output().matchAll(/built the scan layout of (\d+) stored events/g)].reduce((n, m) => n + Number(m[1]), 0);
  t.equal(built, 3000, 'every stored event went into the new layout');
  t.same(await answers(new Client(rebuilt.base)), before, 'the same answers');
  // New events after the rebuild join the rebuilt layout.
  t.equal((await sendBatch(rebuilt.base, [{ event: '$pageview', distinct_id: 'late', timestamp: '2026-11-03T10:00:00Z', properties: { $browser: 'Chrome' } }])).status, 200);
  const after = await answers(new Client(rebuilt.base)) as [string, number[]][][];
  const chrome = after[0]!.find(([value]) => value === 'Chrome')!;
  const chromeBefore = (before[0] as [string, number[]][]).find(([value]) => value === 'Chrome')!;
  t.equal(chrome[1][2], chromeBefore[1][2]! + 1);
});
