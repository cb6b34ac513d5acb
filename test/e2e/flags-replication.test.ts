// A flag or cohort changed through the API is what /flags/ answers on every worker as soon as the API call has
// returned. Run with 4 workers so consecutive requests land on different threads.
import t from 'tap';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const FF = '/api/projects/@current/feature_flags/';
const server = quillForFile(t, { workers: 4 });

async function enabledEverywhere(key: string, concurrent = 32): Promise<boolean[]> {
  const anon = new Client(server.q.base, null);
  return Promise.all(Array.from({ length: concurrent }, async (_, i) => {
    const res = await anon.post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: `replica-${i}`, flag_keys_to_evaluate: [key] });
    return res.body.flags[key]?.enabled ?? false;
  }));
}

t.test('every answer after PATCH returns reflects the change', async (t) => {
  const created = await server.api.post(FF, { key: 'toggle', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  const id = created.body.id;
  t.same(new Set(await enabledEverywhere('toggle')), new Set([true]));
  for (let round = 0; round < 10; round++) {
    const on = round % 2 === 1;
    const patched = await server.api.patch(`${FF}${id}/`, { filters: { groups: [{ properties: [], rollout_percentage: on ? 100 : 0 }] } });
    t.equal(patched.status, 200);
    const answers = await enabledEverywhere('toggle');
    t.same([...new Set(answers)], [on], `round ${round}: all 32 answers (over 4 workers) are ${on}`);
  }
  await server.api.patch(`${FF}${id}/`, { active: false });
  t.same(await enabledEverywhere('toggle'), Array(32).fill(false), 'deactivation is immediate too');
  await server.api.patch(`${FF}${id}/`, { active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  await server.api.patch(`${FF}${id}/`, { deleted: true });
  const anon = new Client(server.q.base, null);
  const afterDelete = await anon.post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'x' });
  t.notOk('toggle' in afterDelete.body.flags, 'a soft-deleted flag disappears at once');
});

t.test('a new flag is served by every worker at once', async (t) => {
  for (let i = 0; i < 5; i++) {
    const key = `fresh-${i}`;
    t.equal((await server.api.post(FF, { key, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })).status, 201);
    t.same(await enabledEverywhere(key, 16), Array(16).fill(true), `${key} everywhere`);
  }
});
