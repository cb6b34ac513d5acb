import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';
import { sha1Into } from '../sha1.js';

/** Two-character lower-case hex for every byte value. */
const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push((i < 16 ? '0' : '') + i.toString(16));

function format(b: Uint8Array): string {
  return (
    HEX[b[0]!]! + HEX[b[1]!]! + HEX[b[2]!]! + HEX[b[3]!]! + '-' +
    HEX[b[4]!]! + HEX[b[5]!]! + '-' +
    HEX[b[6]!]! + HEX[b[7]!]! + '-' +
    HEX[b[8]!]! + HEX[b[9]!]! + '-' +
    HEX[b[10]!]! + HEX[b[11]!]! + HEX[b[12]!]! + HEX[b[13]!]! + HEX[b[14]!]! + HEX[b[15]!]!
  );
}

// Random bytes are drawn in blocks (10 per UUID): one getrandom call per ~400 UUIDs instead of one per UUID.
const POOL = new Uint8Array(4096);
let poolPos = POOL.length;

// Monotonic state (RFC 9562 §6.2 method 1, 12-bit counter in rand_a): UUIDs made within one millisecond still
// sort in creation order, which keeps event keys append-only in the store.
let lastMs = -1;
let counter = 0;

/**
 * RFC 9562 UUIDv7 for time `now` (epoch ms): 48-bit timestamp, version 7, 12-bit counter, variant 10, 62 random
 * bits. Within one millisecond the counter increases; on overflow (or a clock going backwards) the timestamp
 * field advances by 1 ms so ordering is never violated.
 */
export function uuidv7(now: number): string {
  if (poolPos + 10 > POOL.length) {
    randomFillSync(POOL);
    poolPos = 0;
  }
  const ms = Math.floor(now);
  if (ms > lastMs) {
    lastMs = ms;
    // Start from a random value in the lower half so a burst in one ms rarely overflows.
    counter = ((POOL[poolPos]! << 8) | POOL[poolPos + 1]!) & 0x7ff;
  } else {
    counter++;
    if (counter > 0xfff) {
      lastMs++;
      counter = 0;
    }
  }
  const b = new Uint8Array(16);
  let t = lastMs;
  for (let i = 5; i >= 0; i--) {
    b[i] = t % 256;
    t = Math.floor(t / 256);
  }
  b[6] = 0x70 | (counter >> 8);
  b[7] = counter & 0xff;
  b[8] = 0x80 | (POOL[poolPos + 2]! & 0x3f);
  for (let i = 9; i < 16; i++) b[i] = POOL[poolPos + i - 6]!; // POOL[poolPos+3 .. poolPos+9]
  poolPos += 10;
  return format(b);
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** Canonical 8-4-4-4-12 hex form, either case. (Braced, URN and 32-digit forms are not accepted.) */
export function isUuid(s: string): boolean {
  if (typeof s !== 'string' || s.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
    } else if (!isHex(c)) {
      return false;
    }
  }
  return true;
}

function parseUuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replaceAll('-', ''), 'hex');
}

const namespaceBytes = new Map<string, Buffer>();

/** RFC 9562 §5.5 name-based UUID (SHA-1): sha1(namespace bytes ‖ UTF-8 name), version 5, variant 10. */
export function uuidv5(namespace: string, name: string): string {
  // Every new person needs one (§2.1); parsing the namespace each time was most of its cost.
  let ns = namespaceBytes.get(namespace);
  if (ns === undefined) namespaceBytes.set(namespace, (ns = parseUuidBytes(namespace)));
  const hash = new Uint8Array(20);
  sha1Into(ns, name, hash);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return format(hash);
}

/** PostHog's person-UUID namespace (a random v4 chosen by PostHog; must match for deterministic ids, §2.1). */
export const PERSON_UUID_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22';

/** §2.1 [2023+]: deterministic person UUID, UUIDv5 of `"<teamId>:<distinctId>"`. */
export function personUuid(teamId: number, distinctId: string): string {
  return uuidv5(PERSON_UUID_NAMESPACE, `${teamId}:${distinctId}`);
}
