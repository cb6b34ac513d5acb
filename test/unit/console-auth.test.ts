// Pure pieces of console sign-in: password hashes, the wrong-password throttle (its schedule, and the owner signing
// in from another address while one address floods wrong passwords), the client address it counts,
// the session cookie, and the choice of a compressed file.
import t from 'tap';
import { hashPassword, hashPasswordSync, passwordProblem, UNUSABLE_HASH, verifyPassword } from '../../src/domain/passwords.js';
import { accountKey, ADDRESS_RULE, addressKey, clientAddress, delayMs, LoginThrottle, PAIR_RULE } from '../../src/domain/login-throttle.js';
import { clearedSessionCookie, cookieValue, isSafeMethod, sessionCookie } from '../../src/domain/cookies.js';
import { acceptedEncodings, chooseEncoding, type ConsoleAsset } from '../../src/front/console-assets.js';

t.test('passwords: scrypt hashes verify only the same password; each hash has its own salt', async (t) => {
  const a = await hashPassword('correct horse');
  const b = hashPasswordSync('correct horse');
  t.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  t.not(a, b, 'salted');
  t.equal(await verifyPassword('correct horse', a), true);
  t.equal(await verifyPassword('correct horse', b), true, 'sync and async hashes are the same format');
  t.equal(await verifyPassword('correct horsE', a), false);
  t.equal(await verifyPassword('', a), false);
  t.equal(await verifyPassword('anything', null), false, 'no hash: nothing matches');
  t.equal(await verifyPassword('anything', UNUSABLE_HASH), false);
  t.equal(await verifyPassword('anything', 'not-a-hash'), false, 'a malformed hash matches nothing');
  t.equal(await verifyPassword('ｃｏｒｒｅｃｔ horse', a), true, 'NFKC: compatibility forms are the same password');
});

t.test('password rules', async (t) => {
  t.equal(passwordProblem('12345678'), null);
  t.match(passwordProblem('1234567'), /too short/);
  t.match(passwordProblem('x'.repeat(129)), /no more than 128/);
  t.equal(passwordProblem(42), 'Not a valid string.');
});

const MIN = 60_000;

t.test('throttle schedule: five failures free per (account, address), then 1 s doubling to 15 min; per address 30, to 1 h', async (t) => {
  t.same([0, 4, 5, 6, 7, 8, 14, 15, 16, 1000].map((f) => delayMs(PAIR_RULE, f)), [0, 0, 1000, 2000, 4000, 8000, 512_000, 15 * MIN, 15 * MIN, 15 * MIN]);
  t.same([29, 30, 31, 40, 41, 42, 43].map((f) => delayMs(ADDRESS_RULE, f)), [0, 1000, 2000, 1_024_000, 2_048_000, 60 * MIN, 60 * MIN]);
  t.ok(PAIR_RULE.forgetMs >= PAIR_RULE.capMs && ADDRESS_RULE.forgetMs >= ADDRESS_RULE.capMs, 'no key is forgotten before its wait ends');
  t.throws(() => new LoginThrottle({ ...PAIR_RULE, forgetMs: 1000 }), /must not forget/);
});

t.test('throttle: wrong passwords from one address never block the right password from another', async (t) => {
  const th = new LoginThrottle();
  let now = 1_000_000;
  const verdicts = Array.from({ length: 50 }, () => th.begin('owner@x', '203.0.113.66', now++));
  t.same(verdicts.slice(0, 5).map((v) => v.allowed), [true, true, true, true, true], 'five free');
  t.ok(verdicts.slice(5).every((v) => !v.allowed), 'then the attacker waits');
  t.same(th.begin('owner@x', '198.51.100.1', now), { allowed: true }, 'the owner from another address is checked at once');
  th.succeeded('owner@x', '198.51.100.1', now);
  t.same(th.begin('owner@x', '198.51.100.1', now + 1), { allowed: true }, 'and again');
  t.same(th.begin('owner@x', '203.0.113.66', now), { allowed: false, retryAfterSeconds: 1 }, 'the right password from the attacking address waits too: it is not checked');
});

t.test('throttle: the delay grows with each checked failure; a refused attempt restarts it, uncounted', async (t) => {
  const th = new LoginThrottle();
  let now = 0;
  for (let i = 0; i < 5; i++) t.equal(th.begin('a@x', '10.0.0.1', now).allowed, true);
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) {
    const refused = th.begin('a@x', '10.0.0.1', now + 10);
    if (refused.allowed) return t.fail('a guess right after a failure must wait');
    seen.push(refused.retryAfterSeconds);
    now += 10 + refused.retryAfterSeconds * 1000;
    t.equal(th.begin('a@x', '10.0.0.1', now - 1).allowed, false, 'a millisecond early: refused (and the wait restarted)');
    now += refused.retryAfterSeconds * 1000 - 1;
    t.equal(th.begin('a@x', '10.0.0.1', now).allowed, true, 'waiting as told: checked');
  }
  t.same(seen, [1, 2, 4, 8, 16, 32], 'Retry-After is the whole delay of the failures counted so far');
  for (let i = 0; i < 20; i++) {
    const v = th.begin('a@x', '10.0.0.1', now + 1);
    now += 1 + (v.allowed ? 0 : v.retryAfterSeconds * 1000);
  }
  t.same(th.begin('a@x', '10.0.0.1', now + 1), { allowed: false, retryAfterSeconds: 15 * 60 }, 'capped at 15 minutes');
  t.same(th.begin('a@x', '10.0.0.1', now + 1 + PAIR_RULE.forgetMs), { allowed: true }, 'forgotten a day after the last attempt');
});

t.test('throttle: a success clears its pair; an attempt counts before its answer (parallel guesses)', async (t) => {
  const th = new LoginThrottle();
  const started = Array.from({ length: 8 }, () => th.begin('p@x', '10.1.1.1', 0));
  t.same(started.map((v) => v.allowed), [true, true, true, true, true, false, false, false], 'the sixth concurrent attempt is refused');
  const th2 = new LoginThrottle();
  for (let i = 0; i < 4; i++) th2.begin('ok@x', '10.1.1.2', i);
  th2.begin('ok@x', '10.1.1.2', 10);
  th2.succeeded('ok@x', '10.1.1.2', 10);
  for (let i = 0; i < 5; i++) t.equal(th2.begin('ok@x', '10.1.1.2', 11 + i).allowed, true, 'the success cleared the earlier failures');
  const th3 = new LoginThrottle();
  for (let i = 0; i < 100; i++) {
    t.equal(th3.begin('ok@x', '10.1.1.3', i).allowed, true);
    th3.succeeded('ok@x', '10.1.1.3', i);
  }
});

t.test('throttle: per address across accounts, with a higher ceiling; IPv6 counts per /64', async (t) => {
  const th = new LoginThrottle();
  for (let i = 0; i < 30; i++) t.equal(th.begin(`u${i}@x`, '10.2.2.2', 0).allowed, true);
  t.same(th.begin('fresh@x', '10.2.2.2', 10), { allowed: false, retryAfterSeconds: 1 }, 'the 31st account from the address waits');
  t.equal(th.begin('fresh@x', '10.2.2.3', 10).allowed, true, 'another address does not');
  for (let i = 0; i < 30; i++) th.begin(`v${i}@x`, `2001:db8:1:2:${i.toString(16)}::1`, 0);
  t.same(th.begin('fresh@x', '2001:db8:1:2:ffff::9', 10), { allowed: false, retryAfterSeconds: 1 }, 'one /64');
  t.equal(th.begin('fresh@x', '2001:db8:1:3::1', 10).allowed, true, 'the next /64 is another client');
});

t.test('throttle: the tables are bounded, and filling them forgets counts, never locks anyone out', async (t) => {
  const th = new LoginThrottle(PAIR_RULE, ADDRESS_RULE, 1000);
  for (let i = 0; i < 5; i++) th.begin('owner@x', '198.51.100.7', i);
  t.equal(th.begin('owner@x', '198.51.100.7', 10).allowed, false);
  for (let i = 0; i < 5000; i++) th.begin(`spray${i}@x`, `10.3.${i >> 8}.${i & 255}`, 20);
  t.same(th.size, { pairs: 1000, addresses: 1000 }, 'at most 1000 keys each');
  t.same(th.begin('owner@x', '198.51.100.9', 30), { allowed: true }, 'the owner from another address, as ever');
  t.same(th.begin('owner@x', '198.51.100.7', 30), { allowed: true }, 'the evicted pair starts afresh');
});

t.test('address keys: IPv4 as is, IPv4-mapped as IPv4, IPv6 by /64', async (t) => {
  t.equal(addressKey('203.0.113.9'), '203.0.113.9');
  t.equal(addressKey('::ffff:203.0.113.9'), '203.0.113.9');
  t.equal(addressKey('0000:0000:0000:0000:0000:ffff:cb00:7109'), '203.0.113.9', 'as uWS writes a mapped peer');
  t.equal(addressKey('2001:DB8::1'), '2001:db8:0:0::/64');
  t.equal(addressKey('2001:0db8:0000:0000:1234:5678:9abc:def0'), '2001:db8:0:0::/64');
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.equal(addressKey('::1'), '0:0:0:0::/64');
  t.equal(addressKey('1:2:3:4:5:6:7:8:9'), '1:2:3:4:5:6:7:8:9', 'not an address: as written');
  t.equal(addressKey('x'.repeat(500)).length, 64);
  t.equal(accountKey(`${'a'.repeat(300)}@x`), accountKey(`${'b'.repeat(300)}@x`), 'over-long e-mails (no one\'s) share one short key');
});

t.test('account key and client address', async (t) => {
  t.equal(accountKey('  Admin@Quill.Local '), 'admin@quill.local');
  t.equal(accountKey(undefined), '');
  t.equal(clientAddress('127.0.0.1', '203.0.113.9, 10.0.0.1'), '10.0.0.1', 'a local proxy: the address it appended');
  t.equal(clientAddress('::1', '203.0.113.9'), '203.0.113.9');
  t.equal(clientAddress('198.51.100.4', '203.0.113.9'), '198.51.100.4', 'a remote peer cannot choose its address');
  t.equal(clientAddress('127.0.0.1', ''), '127.0.0.1');
});

t.test('session cookie', async (t) => {
  t.equal(cookieValue('a=1; quill_session=abc; b=2', 'quill_session'), 'abc');
  t.equal(cookieValue('quill_sessionx=abc', 'quill_session'), null);
  t.equal(cookieValue('', 'quill_session'), null);
  t.equal(sessionCookie('tok', false), 'quill_session=tok; Path=/; Max-Age=1209600; HttpOnly; SameSite=Lax');
  t.match(sessionCookie('tok', true), /; Secure$/);
  t.match(clearedSessionCookie(false), /^quill_session=; Path=\/; Max-Age=0;/);
  t.same(['GET', 'HEAD', 'OPTIONS', 'POST', 'PATCH', 'DELETE', 'PUT'].map(isSafeMethod), [true, true, true, false, false, false, false]);
});

t.test('Accept-Encoding: brotli, then gzip, honouring q=0', async (t) => {
  const asset = { body: Buffer.from('plain'), gzip: Buffer.from('gz'), brotli: Buffer.from('br') } as ConsoleAsset;
  t.same([...acceptedEncodings('gzip, deflate, br')].sort(), ['br', 'deflate', 'gzip']);
  t.equal(chooseEncoding(asset, 'gzip, deflate, br').encoding, 'br');
  t.equal(chooseEncoding(asset, 'br;q=0, gzip;q=0.5').encoding, 'gzip');
  t.equal(chooseEncoding(asset, 'br;q=0.0, gzip;q=0').encoding, null);
  t.equal(chooseEncoding(asset, '*').encoding, 'br');
  t.equal(chooseEncoding(asset, '').encoding, null);
  t.equal(chooseEncoding({ ...asset, brotli: null }, 'br, gzip').encoding, 'gzip', 'no brotli copy: gzip');
});
