/**
 * The small dataset the query API tests share: a new project where, in November 2026, visitor a views pages on the
 * 10th, 11th and 12th with Chrome, b on the 10th and 12th with Safari (both sign up an hour after each view), and c
 * once on the 11th with Safari, never signing up. `extra` events go in the same batch. Returns the project's path.
 */
import type { Client, QuillProcess } from './quill.js';

export const novemberAt = (day: number, hour = 12, minute = 0) => new Date(Date.UTC(2026, 10, day, hour, minute)).toISOString();

export async function threeVisitors(server: { q: QuillProcess; api: Client }, name: string, extra: object[] = []): Promise<string> {
  const created = await server.api.post('/api/projects/', { name });
  const batch: object[] = [];
  const activity: Record<string, number[]> = { a: [10, 11, 12], b: [10, 12], c: [11] };
  for (const [id, days] of Object.entries(activity)) for (const d of days) {
    batch.push({ event: '$pageview', distinct_id: id, timestamp: novemberAt(d), properties: { $browser: id === 'a' ? 'Chrome' : 'Safari', $current_url: `https://x.test/${d}` } });
    if (id !== 'c') batch.push({ event: 'signup', distinct_id: id, timestamp: novemberAt(d, 13) });
  }
  batch.push(...extra);
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
  return `/api/projects/${created.body.id}`;
}
