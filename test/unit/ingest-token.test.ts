import t from 'tap';
import { extractToken } from '../../src/domain/ingest/index.js';

type Case = {
  name: string;
  payload?: unknown;
  form?: Record<string, string> | null;
  query?: Record<string, string>;
  method?: string;
  token: string | null;
  projectId?: unknown;
};

const cases: Case[] = [
  { name: 'GET query token', method: 'GET', query: { token: 'q_token', api_key: 'q_key' }, payload: { token: 'b' }, token: 'q_token' },
  { name: 'GET query api_key', method: 'GET', query: { api_key: 'q_key' }, payload: { token: 'b' }, token: 'q_key' },
  { name: 'POST ignores query token (Django: GET only)', method: 'POST', query: { token: 'q_token' }, payload: { token: 'b' }, token: 'b' },
  { name: 'form api_key before form token', form: { api_key: 'f_key', token: 'f_token' }, payload: { token: 'b' }, token: 'f_key' },
  { name: 'form token', form: { token: 'f_token' }, payload: { token: 'b' }, token: 'f_token' },
  { name: 'body $token first', payload: { $token: 'dollar', token: 't', api_key: 'k' }, token: 'dollar' },
  { name: 'body token', payload: { token: 't', api_key: 'k', properties: { token: 'p' } }, token: 't' },
  { name: 'body api_key (batch envelope / server SDKs)', payload: { api_key: 'k', batch: [], properties: { token: 'p' } }, token: 'k' },
  { name: 'batch envelope token', payload: { token: 'env', batch: [{ properties: { token: 'item' } }] }, token: 'env' },
  { name: 'properties.token (posthog-js capture)', payload: { event: 'x', properties: { token: 'p' } }, token: 'p' },
  { name: 'array body: first item only', payload: [{ properties: { token: 'first' } }, { token: 'second' }], token: 'first' },
  { name: 'array body whose first item has none', payload: [{ event: 'x' }, { token: 'second' }], token: null },
  { name: 'batch without envelope key: first batch item', payload: { batch: [{ event: 'x', properties: { token: 'item' } }] }, token: 'item' },
  { name: 'values are trimmed', payload: { api_key: '  phc_trim \n' }, token: 'phc_trim' },
  { name: 'empty / non-string values are skipped', payload: { $token: '  ', token: 42, api_key: 'k' }, token: 'k' },
  { name: 'no token anywhere', payload: { event: 'x', properties: {} }, token: null },
  { name: 'scalar payload', payload: 'phc_looks_like_a_token', token: null },
  { name: 'project_id from query', query: { project_id: '7' }, form: { project_id: '8' }, payload: { project_id: 9, api_key: 'k' }, token: 'k', projectId: '7' },
  { name: 'project_id from form', form: { project_id: '8' }, payload: { project_id: 9 }, token: null, projectId: '8' },
  { name: 'project_id from body (raw value, caller validates)', payload: { project_id: 'abc', api_key: 'k' }, token: 'k', projectId: 'abc' },
  { name: 'project_id from first array item', payload: [{ project_id: 3 }], token: null, projectId: 3 },
  { name: 'no project_id', payload: { api_key: 'k' }, token: 'k', projectId: null },
];

t.test('token and project_id sources (§1.4)', async (t) => {
  for (const c of cases) {
    const r = extractToken(c.payload, c.form ?? null, c.query ?? {}, c.method ?? 'POST');
    t.equal(r.token, c.token, c.name);
    if ('projectId' in c) t.same(r.projectId, c.projectId, `${c.name} (project_id)`);
  }
});
