/** Helpers for tests that send events and read back what Quill stored. */
import { randomUUID } from 'node:crypto';
import { Client, PROJECT_KEY } from './quill.js';

export function event(distinctId: string, name = 'test event', properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return { event: name, distinct_id: distinctId, properties, uuid: randomUUID(), ...extra };
}

export async function sendBatch(base: string, batch: unknown[], path = '/batch/'): Promise<Response> {
  return fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch }) });
}

/** Every event a list query matches, newest first, following `next` links (a page holds at most 1,000). */
export async function allEvents(api: Client, query: string): Promise<any[]> {
  const out: any[] = [];
  let path: string | null = `/api/projects/@current/events/?${query}&limit=1000`;
  while (path !== null) {
    const res = await api.get(path);
    if (res.status !== 200) throw new Error(`events list: ${res.status} ${res.text}`);
    out.push(...res.body.results);
    path = res.body.next === null ? null : res.body.next.slice(api.base.length);
  }
  return out;
}

/** Stored events of one distinct id, oldest first (the events API waits until acknowledged events are applied). */
export async function storedEvents(api: Client, distinctId: string): Promise<any[]> {
  return (await allEvents(api, `distinct_id=${encodeURIComponent(distinctId)}`)).reverse();
}

export async function personOf(api: Client, distinctId: string): Promise<any | null> {
  const res = await api.get(`/api/projects/@current/persons/?distinct_id=${encodeURIComponent(distinctId)}`);
  if (res.status !== 200) throw new Error(`persons list: ${res.status} ${res.text}`);
  return res.body.results[0] ?? null;
}
