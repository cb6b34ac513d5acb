// QUILL_LOG_LEVEL=debug checks every front→worker request against the protocol schema (src/worker/request-port.ts;
// what a malformed one gets is tested in test/unit/request-port.test.ts). Here: the check is really on in a debug
// server, and the messages the real front sends for every kind of route pass it.
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2, env: { QUILL_LOG_LEVEL: 'debug' } });
const FF = '/api/projects/@current/feature_flags/';

t.test('every kind of request passes the schema check of a debug server', async (t) => {
  const { base } = server.q;
  const api = server.api;
  const anonymous = new Client(base, null);
  const statuses: Record<string, number> = {};
  statuses.batch = (await sendBatch(base, [event('debug-1', 'x', { n: 1 })])).status;
  statuses.gzipCapture = (await fetch(`${base}/e/?compression=gzip-js`, { method: 'POST', body: gzipSync(JSON.stringify({ api_key: PROJECT_KEY, event: 'y', distinct_id: 'debug-1' })) })).status;
  statuses.getCapture = (await fetch(`${base}/capture/?data=${encodeURIComponent(JSON.stringify({ api_key: PROJECT_KEY, event: 'z', distinct_id: 'debug-1' }))}`)).status;
  const flag = await api.post(FF, { key: 'debug-flag', filters: { groups: [{ rollout_percentage: 100 }] } });
  statuses.createFlag = flag.status;
  statuses.patchFlag = (await api.patch(`${FF}${flag.body.id}/`, { name: 'renamed' })).status;
  statuses.listFlags = (await api.get(FF)).status;
  statuses.flags = (await anonymous.post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'debug-1' })).status;
  statuses.decide = (await anonymous.post('/decide/?v=3', { token: PROJECT_KEY, distinct_id: 'debug-1' })).status;
  statuses.remoteConfig = (await anonymous.get(`/array/${PROJECT_KEY}/config`)).status;
  statuses.definitions = (await api.get(`/flags/definitions?token=${PROJECT_KEY}`)).status;
  statuses.events = (await api.get('/api/projects/@current/events/?distinct_id=debug-1')).status;
  statuses.persons = (await api.get('/api/projects/@current/persons/?distinct_id=debug-1')).status;
  statuses.me = (await api.get('/api/users/@me/')).status;
  statuses.stats = (await api.get('/_stats')).status;
  statuses.badBody = (await api.post(FF, { key: 42 })).status;
  t.same(statuses, {
    batch: 200, gzipCapture: 200, getCapture: 200, createFlag: 201, patchFlag: 200, listFlags: 200, flags: 200, decide: 200,
    remoteConfig: 200, definitions: 200, events: 200, persons: 200, me: 200, stats: 200, badBody: 400,
  });
  const out = server.q.output();
  t.match(out, /"component":"worker 0","msg":"checking every request from the front against the protocol schema"/, 'worker 0 checks');
  t.match(out, /"component":"worker 1","msg":"checking every request from the front against the protocol schema"/, 'worker 1 checks');
  t.notMatch(out, /malformed/, 'no request was malformed');
});
