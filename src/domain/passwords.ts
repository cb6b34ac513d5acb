/**
 * Password hashes for console sign-in: scrypt (node:crypto), stored as `scrypt$N$r$p$salt$hash` (base64url) so the
 * cost can be raised later without invalidating older hashes. Verification re-derives with the stored parameters
 * and compares in constant time. The async form runs on libuv's thread pool, so a sign-in never blocks a shard
 * worker's event loop for the ~50 ms a derivation takes.
 */
import { randomBytes, scrypt, scryptSync, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** scrypt needs 128·N·r bytes; the default 32 MiB ceiling is enough for N=16384, r=8 (16 MiB), and is explicit here. */
const MAX_MEM = 64 * 1024 * 1024;

export const PASSWORD_MIN_LENGTH = 8;
/** Long enough for any passphrase; bounds the work an attacker can ask for. */
export const PASSWORD_MAX_LENGTH = 128;

function derive(password: string, salt: Buffer, options: ScryptOptions, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, length, options, (err, key) => (err ? reject(err) : resolve(key))));
}

function encode(salt: Buffer, hash: Buffer): string {
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  return encode(salt, await derive(password, salt, { N, r: R, p: P, maxmem: MAX_MEM }, KEY_LENGTH));
}

/** The synchronous form, for first start-up only (nothing else is waiting then). */
export function hashPasswordSync(password: string): string {
  const salt = randomBytes(16);
  return encode(salt, scryptSync(password.normalize('NFKC'), salt, KEY_LENGTH, { N, r: R, p: P, maxmem: MAX_MEM }));
}

interface Parsed {
  options: ScryptOptions;
  salt: Buffer;
  hash: Buffer;
}

function parse(stored: string): Parsed | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![n, r, p].every((v) => Number.isInteger(v) && v > 0)) return null;
  return { options: { N: n, r, p, maxmem: MAX_MEM }, salt: Buffer.from(parts[4]!, 'base64url'), hash: Buffer.from(parts[5]!, 'base64url') };
}

/** A hash that matches nothing, verified when the account does not exist so both answers take as long. */
export const UNUSABLE_HASH = encode(Buffer.alloc(16), Buffer.alloc(KEY_LENGTH));

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parsed = parse(stored ?? UNUSABLE_HASH) ?? parse(UNUSABLE_HASH)!;
  const derived = await derive(password, parsed.salt, parsed.options, parsed.hash.length);
  return timingSafeEqual(derived, parsed.hash) && stored != null;
}

/** Why a new password is refused (DRF-style detail), or null. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== 'string') return 'Not a valid string.';
  if ([...password].length < PASSWORD_MIN_LENGTH) return `This password is too short. It must contain at least ${PASSWORD_MIN_LENGTH} characters.`;
  if ([...password].length > PASSWORD_MAX_LENGTH) return `Ensure this field has no more than ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}
