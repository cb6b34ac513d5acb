import t from 'tap';
import { extractSentAt } from '../../src/domain/ingest/index.js';

const MS = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
const SECONDS = Math.floor(MS / 1000) * 1000;

type Case = { name: string; payload?: unknown; form?: Record<string, string> | null; query?: Record<string, string>; expected: number | null };

const cases: Case[] = [
  { name: 'query _ in ms (13 digits)', query: { _: String(MS) }, payload: { sent_at: '2000-01-01T00:00:00Z' }, expected: MS },
  { name: 'query _ in seconds (10 digits)', query: { _: String(SECONDS / 1000) }, expected: SECONDS },
  { name: 'query _ with 11 digits is still seconds', query: { _: '10000000000' }, expected: 10000000000 * 1000 },
  { name: 'query _ with 12 digits is ms', query: { _: '100000000000' }, expected: 100000000000 },
  { name: 'body sent_at ISO', payload: { sent_at: '2024-01-02T03:04:05.678Z', batch: [] }, expected: MS },
  { name: 'body sent_at ISO with offset', payload: { sent_at: '2024-01-02T05:04:05.678+02:00' }, expected: MS },
  { name: 'body sent_at digits (ms)', payload: { sent_at: String(MS) }, expected: MS },
  { name: 'body sent_at number (ms)', payload: { sent_at: MS }, expected: MS },
  { name: 'body sent_at ignored for array bodies', payload: [{ sent_at: '2024-01-02T03:04:05.678Z' }], expected: null },
  { name: 'form sent_at', form: { sent_at: String(SECONDS / 1000) }, payload: { event: 'x' }, expected: SECONDS },
  { name: 'body wins over form', payload: { sent_at: '2024-01-02T03:04:05.678Z' }, form: { sent_at: '1' }, expected: MS },
  { name: 'query sent_at (posthog-js query mode, ms)', query: { sent_at: String(MS) }, expected: MS },
  { name: 'invalid _ falls through to body', query: { _: 'abc' }, payload: { sent_at: '2024-01-02T03:04:05.678Z' }, expected: MS },
  { name: 'invalid everywhere', query: { _: 'nope' }, payload: { sent_at: 'yesterday-ish' }, expected: null },
  { name: 'none', payload: { event: 'x' }, expected: null },
];

t.test('sent_at sources (§1.7)', async (t) => {
  for (const c of cases) t.equal(extractSentAt(c.payload, c.form ?? null, c.query ?? {}), c.expected, c.name);
});
