// Analyses count an event for the person its distinct id belongs to now. The resolution of merged persons is built
// once and reused until the project's next merge: a merge after a query must show in the next answer. Lifecycle
// also keeps merged persons' created_at between queries: a change of the row must show in the next answer.
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

t.test('lifecycle takes a merged person\'s created_at from its row, and follows the row when it changes', async (t) => {
  const project = await server.api.post('/api/projects/', { name: 'lifecycle created_at' });
  const token = project.body.api_token;
  const P = `/api/projects/${project.body.id}`;
  const lifecycle = async () => {
    const qs = `insight=LIFECYCLE&shown_as=Lifecycle&events=${encodeURIComponent('[{"id":"$pageview"}]')}&date_from=2026-11-02&date_to=2026-11-06&refresh=true`;
    const res = await server.api.get(`${P}/insights/trend/?${qs}`);
    if (res.status !== 200) throw new Error(`lifecycle ${res.status} ${res.text}`);
    return Object.fromEntries((res.body.result as { status: string; data: number[] }[]).map((r) => [r.status, r.data[2]]));
  };
  // The device was first seen on Nov 1 (not a pageview), the user on Nov 4 with a pageview: two persons.
  await capture(token, [
    { event: 'app opened', distinct_id: 'device', timestamp: '2026-11-01T10:00:00Z' },
    { event: '$pageview', distinct_id: 'user', timestamp: '2026-11-04T10:00:00Z' },
  ]);
  t.same(await lifecycle(), { new: 1, returning: 0, resurrecting: 0, dormant: 0 }, 'the user is new on Nov 4');
  // Identifying merges the device into the user, whose created_at becomes Nov 1: before the range, so the pageview
  // of Nov 4 is no longer "new" (the device's events are all there is to show it, and they are not pageviews).
  await capture(token, [{ event: '$identify', distinct_id: 'user', timestamp: '2026-11-05T10:00:00Z', properties: { $anon_distinct_id: 'device' } }]);
  t.same(await lifecycle(), { new: 0, returning: 0, resurrecting: 1, dormant: 0 }, 'created on Nov 1 (the row), so resurrecting on Nov 4');
  t.same(await lifecycle(), { new: 0, returning: 0, resurrecting: 1, dormant: 0 }, 'the same from the kept created_at');
  const user = (await server.api.get(`${P}/persons/?distinct_id=user`)).body.results[0];
  t.equal((await server.api.delete(`${P}/persons/${user.id}/`)).status, 204);
  // Without a row, the events' own snapshot (Nov 4) is all there is: the kept created_at must not outlive the row.
  t.same(await lifecycle(), { new: 1, returning: 0, resurrecting: 0, dormant: 0 }, 'after the row is gone, new on Nov 4');
});
