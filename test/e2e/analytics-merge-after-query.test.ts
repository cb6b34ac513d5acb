// Analyses count an event for the person its distinct id belongs to now. The resolution of merged persons is built
// once and reused until the project's next merge: a merge after a query must show in the next answer.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const day = '2026-11-10';
const at = (h: number) => `${day}T${String(h).padStart(2, '0')}:00:00Z`;

async function capture(token: string, events: object[]): Promise<void> {
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch: events }) });
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
}

t.test('a merge after a query changes the next distinct count', async (t) => {
  const project = await server.api.post('/api/projects/', { name: 'merge after query' });
  const token = project.body.api_token;
  const P = `/api/projects/${project.body.id}`;
  const dau = async () => {
    const qs = `events=${encodeURIComponent(JSON.stringify([{ id: '$pageview', math: 'dau' }]))}&date_from=${day}&date_to=${day}&refresh=true`;
    const res = await server.api.get(`${P}/insights/trend/?${qs}`);
    if (res.status !== 200) throw new Error(`trend ${res.status} ${res.text}`);
    return res.body.result[0].data[0] as number;
  };
  // Three devices, three persons; two of them will turn out to be one user.
  await capture(token, ['laptop', 'phone', 'tablet'].map((d, i) => ({ event: '$pageview', distinct_id: d, timestamp: at(9 + i) })));
  t.equal(await dau(), 3, 'three persons before any merge');
  await capture(token, [{ event: '$identify', distinct_id: 'laptop', timestamp: at(13), properties: { $anon_distinct_id: 'phone' } }]);
  t.equal(await dau(), 2, 'the phone merged into the laptop counts once');
  await capture(token, [{ event: '$identify', distinct_id: 'laptop', timestamp: at(14), properties: { $anon_distinct_id: 'tablet' } }]);
  t.equal(await dau(), 1, 'and a second merge too');
});
