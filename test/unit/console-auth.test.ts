// Pure pieces of console sign-in: password hashes, the wrong-password throttle, the client address it counts,
// the session cookie, and the choice of a compressed file.
import t from 'tap';
import { hashPassword, hashPasswordSync, passwordProblem, UNUSABLE_HASH, verifyPassword } from '../../src/domain/passwords.js';
import { accountKey, clientAddress, LoginThrottle } from '../../src/domain/login-throttle.js';
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

t.test('throttle: five failures lock the account for the window; a success clears it', async (t) => {
  const th = new LoginThrottle({ max: 5, windowMs: 60_000 }, { max: 100, windowMs: 60_000 });
  for (let i = 0; i < 5; i++) t.same(th.begin('a@x', `10.0.0.${i}`, 1000 + i), { allowed: true }, `attempt ${i + 1}`);
  t.same(th.begin('a@x', '10.0.0.99', 2000), { allowed: false, retryAfterSeconds: 59 }, 'locked from any address, until the window ends');
  t.same(th.begin('b@x', '10.0.0.99', 2000), { allowed: true }, 'another account is not');
  t.same(th.begin('a@x', '10.0.0.99', 61_000), { allowed: true }, 'the window has passed');
  th.succeeded('a@x', '10.0.0.99', 61_001);
  for (let i = 0; i < 4; i++) th.begin('a@x', '10.0.0.1', 62_000);
  t.same(th.begin('a@x', '10.0.0.1', 62_000), { allowed: true }, 'the success cleared the earlier failures');
});

t.test('throttle: an attempt counts before its answer (parallel guesses), and is forgiven on success', async (t) => {
  const th = new LoginThrottle({ max: 3, windowMs: 60_000 }, { max: 100, windowMs: 60_000 });
  const started = [0, 1, 2, 3].map(() => th.begin('p@x', '10.1.1.1', 0));
  t.same(started.map((v) => v.allowed), [true, true, true, false], 'the fourth concurrent attempt is refused');
  const th2 = new LoginThrottle({ max: 3, windowMs: 60_000 }, { max: 100, windowMs: 60_000 });
  for (let i = 0; i < 10; i++) {
    t.equal(th2.begin('ok@x', '10.1.1.2', i).allowed, true);
    th2.succeeded('ok@x', '10.1.1.2', i);
  }
});

t.test('throttle: per address across accounts', async (t) => {
  const th = new LoginThrottle({ max: 5, windowMs: 60_000 }, { max: 3, windowMs: 60_000 });
  for (let i = 0; i < 3; i++) th.begin(`u${i}@x`, '10.2.2.2', 0);
  t.same(th.begin('fresh@x', '10.2.2.2', 10), { allowed: false, retryAfterSeconds: 60 });
  t.equal(th.begin('fresh@x', '10.2.2.3', 10).allowed, true);
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
