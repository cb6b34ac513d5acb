import t from 'tap';
import { createHash } from 'node:crypto';
import { isUuid, personUuid, PERSON_UUID_NAMESPACE, uuidv5, uuidv7 } from '../../src/domain/ingest/index.js';

/** Independent RFC 9562 §5.5 reference: sha1(namespace bytes ‖ name), set version 5 and variant 10. */
function referenceV5(namespace: string, name: string): string {
  const h = createHash('sha1').update(Buffer.from(namespace.replaceAll('-', ''), 'hex')).update(Buffer.from(name, 'utf8')).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

t.test('person uuid (§2.1): UUIDv5 of "<team>:<distinct_id>"', async (t) => {
  t.equal(PERSON_UUID_NAMESPACE, '932979b4-65c3-4424-8467-0b66ec27bc22');
  // Published in PostHog's plugin-server test suite (person-uuid.test.ts inline snapshots).
  const published: [number, string, string][] = [
    [1, 'test', '246f7a43-5507-564f-b687-793ee3c2dd79'],
    [2, 'test', '00ce873a-549c-548e-bbec-cc804a385dd8'],
    [1, 'test2', '45c17302-ee44-5596-916a-0eba21f4b638'],
  ];
  for (const [team, id, expected] of published) t.equal(personUuid(team, id), expected, `${team}:${id} (published)`);
  for (const [team, id] of [[1, 'user@example.com'], [42, 'ü ✓ 😀'], [7, '']] as [number, string][]) {
    t.equal(personUuid(team, id), referenceV5(PERSON_UUID_NAMESPACE, `${team}:${id}`), `${team}:${id} (reference)`);
  }
});

t.test('uuidv5 matches a published RFC example', async (t) => {
  // Python docs: uuid.uuid5(uuid.NAMESPACE_DNS, 'python.org')
  t.equal(uuidv5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'python.org'), '886313e1-3b8a-5372-9b90-0c9aee199e5d');
});

t.test('uuidv7 layout (RFC 9562 §5.7)', async (t) => {
  // Later than any time another test of this process gives the generator: it never goes back (see the ordering).
  const now = Date.UTC(2200, 5, 15, 12, 0, 0, 123);
  const u = uuidv7(now);
  t.ok(isUuid(u), 'canonical form');
  t.equal(u, u.toLowerCase(), 'lower case');
  t.equal(parseInt(u.slice(0, 8) + u.slice(9, 13), 16), now, '48-bit ms timestamp');
  t.equal(u[14], '7', 'version 7');
  t.match(u[19], /[89ab]/, 'variant 10');
});

t.test('uuidv7 ordering', async (t) => {
  const now = Date.UTC(2030, 0, 1);
  const sameMs = Array.from({ length: 5000 }, () => uuidv7(now)); // > 4096: forces a counter overflow
  t.equal(new Set(sameMs).size, sameMs.length, 'unique');
  t.same([...sameMs].sort(), sameMs, 'monotonic within one millisecond (and across the overflow)');
  const later = uuidv7(now + 10_000);
  t.ok(later > sameMs[sameMs.length - 1]!, 'later time sorts later');
  const backwards = uuidv7(now - 1000);
  t.ok(backwards > later, 'a clock going backwards never breaks ordering');
});

t.test('isUuid', async (t) => {
  const cases: [string, boolean][] = [
    ['0190163d-8694-739b-aadc-0ea0a8c2e3f3', true],
    ['0190163D-8694-739B-AADC-0EA0A8C2E3F3', true],
    ['00000000-0000-0000-0000-000000000000', true],
    ['0190163d8694739baadc0ea0a8c2e3f3', false],
    ['{0190163d-8694-739b-aadc-0ea0a8c2e3f3}', false],
    ['0190163d-8694-739b-aadc-0ea0a8c2e3fg', false],
    ['0190163d-8694-739b-aadc0-ea0a8c2e3f3', false],
    ['', false],
  ];
  for (const [s, ok] of cases) t.equal(isUuid(s), ok, s || '(empty)');
});
