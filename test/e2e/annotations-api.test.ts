// The annotations API over HTTP (PostHog's shape): create, list newest date first with its filters, retrieve,
// PATCH (also the soft delete that hides it from the list), DELETE; references to another project's insight
// refused; organization-wide annotations listed by every project of the organization; scopes.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const A = '/api/projects/@current/annotations';

t.test('create, list, retrieve, update, delete', async (t) => {
  const insight = await server.api.post('/api/projects/@current/insights/', { name: 'Signups', filters: { insight: 'TRENDS', events: [{ id: 'signup' }] } });
  t.equal(insight.status, 201);
  const made = await server.api.post(`${A}/`, { content: 'Launch', date_marker: '2026-11-20T10:00:00Z', scope: 'project' });
  t.equal(made.status, 201);
  t.match(made.body, {
    id: Number, content: 'Launch', date_marker: '2026-11-20T10:00:00.000Z', creation_type: 'USR', scope: 'project', dashboard_item: null,
    dashboard_id: null, created_by: { email: 'admin@quill.local' }, deleted: false, created_at: String, updated_at: String,
  });
  const onInsight = await server.api.post(`${A}/`, { content: 'Pricing change', date_marker: '2026-11-25', dashboard_item: insight.body.id });
  t.match(onInsight.body, { scope: 'dashboard_item', dashboard_item: insight.body.id, insight_short_id: insight.body.short_id, insight_name: 'Signups' });
  await server.api.post(`${A}/`, { content: 'Old note', date_marker: '2026-01-02T00:00:00Z' });

  const list = await server.api.get(`${A}/`);
  t.match(list.body, { count: 3, next: null, previous: null });
  t.same(list.body.results.map((a: any) => a.content), ['Pricing change', 'Launch', 'Old note'], 'newest date first');
  t.same((await server.api.get(`${A}/?scope=dashboard_item`)).body.results.map((a: any) => a.content), ['Pricing change']);
  t.same((await server.api.get(`${A}/?dashboardItemId=${insight.body.id}`)).body.results.map((a: any) => a.content), ['Pricing change']);
  t.same((await server.api.get(`${A}/?search=launch`)).body.results.map((a: any) => a.content), ['Launch']);
  t.equal((await server.api.get(`${A}/?limit=1`)).body.next?.includes('offset=1'), true, 'paginated');

  const id = made.body.id;
  t.match((await server.api.get(`${A}/${id}/`)).body, { id, content: 'Launch' });
  t.match((await server.api.patch(`${A}/${id}/`, { content: 'Launch day' })).body, { id, content: 'Launch day', date_marker: '2026-11-20T10:00:00.000Z' });
  t.match((await server.api.patch(`${A}/${id}/`, { deleted: true })).body, { deleted: true });
  t.notOk((await server.api.get(`${A}/`)).body.results.some((a: any) => a.id === id), 'a deleted annotation is not listed');
  t.same((await server.api.get(`${A}/?deleted=true`)).body.results.map((a: any) => a.id), [id], 'unless asked for');
  t.equal((await server.api.delete(`${A}/${onInsight.body.id}/`)).status, 204);
  t.equal((await server.api.get(`${A}/${onInsight.body.id}/`)).status, 404);
});

t.test('validation and isolation', async (t) => {
  t.match((await server.api.post(`${A}/`, { content: 'x', date_marker: 'yesterday-ish' })).body, { type: 'validation_error', attr: 'date_marker' });
  t.match((await server.api.post(`${A}/`, { content: 'x', scope: 'galaxy' })).body, { type: 'validation_error', attr: 'scope' });
  const other = await server.api.post('/api/projects/', { name: 'other' });
  const foreign = await server.api.post(`/api/projects/${other.body.id}/insights/`, { name: 'Theirs', filters: { insight: 'TRENDS', events: [{ id: 'x' }] } });
  t.match((await server.api.post(`${A}/`, { content: 'x', dashboard_item: foreign.body.id })).body, { attr: 'dashboard_item' }, "another project's insight");
  const mine = await server.api.post(`${A}/`, { content: 'Mine only', date_marker: '2026-02-01T00:00:00Z' });
  const everyone = await server.api.post(`${A}/`, { content: 'Company offsite', date_marker: '2026-03-01T00:00:00Z', scope: 'organization' });
  const theirs = (await server.api.get(`/api/projects/${other.body.id}/annotations/`)).body.results.map((a: any) => a.content);
  t.ok(theirs.includes('Company offsite') && !theirs.includes('Mine only'), 'organization-wide ones are everyone\'s, project ones are not');
  t.equal((await server.api.get(`/api/projects/${other.body.id}/annotations/${mine.body.id}/`)).status, 404);
  t.equal((await server.api.get(`/api/projects/${other.body.id}/annotations/${everyone.body.id}/`)).status, 200);
});

t.test('scopes: annotation:read reads, annotation:write writes', async (t) => {
  const key = async (scopes: string[]) => server.api.withKey((await server.api.post('/api/personal_api_keys/', { label: 'annotations', scopes })).body.value);
  const reader = await key(['annotation:read']);
  t.equal((await reader.get(`${A}/`)).status, 200);
  t.equal((await reader.post(`${A}/`, { content: 'no' })).status, 403);
  t.equal((await (await key(['annotation:write'])).post(`${A}/`, { content: 'yes' })).status, 201);
  t.equal((await (await key(['action:read'])).get(`${A}/`)).status, 403);
});
