import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random alphanumeric string; PostHog keys are `phc_`/`phx_` followed by 43 such characters. */
export function randomAlnum(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  // Rejection sampling keeps the distribution uniform (256 is not a multiple of 62).
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    const b = bytes[i]!;
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out.length === length ? out : out + randomAlnum(length - out.length);
}

export const newProjectApiKey = (): string => `phc_${randomAlnum(43)}`;
export const newPersonalApiKey = (): string => `phx_${randomAlnum(43)}`;

/** Personal keys are stored and compared as digests only. */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What the API shows of a key after creation: PostHog's `phx_...abcd` mask. */
export function maskKey(key: string): string {
  return `${key.slice(0, 4)}...${key.slice(-4)}`;
}
