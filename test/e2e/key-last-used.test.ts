// `last_used_at` of personal API keys (src/front/key-usage.ts, the worker's `auth.key_usage`): null until a key is
// used, set after its first use (by Bearer, for local-evaluation definitions, even when its scopes then refuse the
// call), not rewritten by further uses within the minute (Bearer or the query's `personal_api_key`), and written
// before the server stops (SIGTERM right after a use).
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { Client, PROJECT_KEY, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';

interface KeyRow {
  id: string;
  label: string;
  last_used_at: string | null;
}

let q: QuillProcess;
let admin: Client;
t.before(async () => {
  q = await startQuill();
  admin = new Client(q.base);
});
t.teardown(async () => {
  await q?.stop();
  if (q) removeDir(q.dataDir);
});

const keyRows = async (client: Client = admin): Promise<KeyRow[]> => {
  const res = await client.get<KeyRow[]>('/api/personal_api_keys/');
  if (res.status !== 200) throw new Error(`key list: ${res.status}`);
  return res.body;
};
const rowOf = async (id: string, client?: Client) => (await keyRows(client)).find((k) => k.id === id);
/** A new key, as its id and a client using it. */
async function newKey(label: string, scopes: string[] = ['*']): Promise<{ id: string; client: Client }> {
  const res = await admin.post('/api/personal_api_keys/', { label, scopes });
  if (res.status !== 201) throw new Error(`create key: ${res.status}`);
  return { id: res.body.id, client: admin.withKey(res.body.value) };
}
/** Waits until the key's `last_used_at` is set, and returns it. */
const recorded = (id: string) => eventually(`last_used_at of ${id}`, async () => (await rowOf(id))?.last_used_at ?? null);

t.test('null until used; set after the first use; the same within the minute', async (t) => {
  const b = await newKey('key b');
  t.equal((await rowOf(b.id))!.last_used_at, null, 'a key never used has none');
  const before = new Date().toISOString();
  t.equal((await b.client.get('/api/projects/@current/')).status, 200);
  const first = await recorded(b.id);
  t.ok(first >= before && first <= new Date().toISOString(), `the time of the use (${first})`);
  const shown = (await admin.get('/api/personal_api_keys/@current/')).body;
  t.type(shown.last_used_at, 'string', 'the key that reads itself (@current) shows its own');

  // More uses of b, then the first use of c: flushes are written in order, so once c's use shows, any queued use
  // of b would have been written too.
  for (let i = 0; i < 5; i++) t.equal((await b.client.get('/api/projects/@current/feature_flags/')).status, 200);
  t.equal((await admin.withKey(null).get(`/api/projects/@current/?personal_api_key=${encodeURIComponent(b.client.key!)}`)).status, 200);
  const c = await newKey('key c');
  t.equal((await c.client.get('/api/users/@me/')).status, 200);
  await recorded(c.id);
  t.equal((await rowOf(b.id))!.last_used_at, first, 'not rewritten by uses within the minute');
});

t.test('local-evaluation definitions and a refused scope count as uses', async (t) => {
  const reader = await newKey('flag reader', ['feature_flag:read']);
  const definitions = await reader.client.get(`/flags/definitions?token=${PROJECT_KEY}`);
  t.equal(definitions.status, 200);
  t.type(await recorded(reader.id), 'string', 'server SDKs polling definitions are seen');

  const narrow = await newKey('narrow', ['feature_flag:read']);
  t.equal((await narrow.client.get('/api/projects/@current/persons/')).status, 403, 'refused by its scopes');
  t.type(await recorded(narrow.id), 'string', 'the key was still used (as PostHog counts it)');
});

t.test('a use just before SIGTERM is written before the server stops', async (t) => {
  const d = await newKey('key d');
  t.equal((await d.client.get('/api/projects/@current/')).status, 200);
  t.equal(await q.stop(), 0, 'a clean stop');
  q = await startQuill({ dataDir: q.dataDir });
  admin = new Client(q.base);
  t.type((await rowOf(d.id))?.last_used_at, 'string', 'recorded across the restart');
});
