// Password hashing (docs/people.md#passwords): node's scrypt, memory-hard, with a random 16-byte salt per
// password, stored in the self-describing PHC string format `$scrypt$ln=15,r=8,p=3$<salt>$<hash>` (base64
// without padding), so that a stored hash names its own parameters and stronger ones can come later: a
// password verified against older parameters is hashed again (needsRehash).
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

export interface ScryptParameters {
  /** log2 of the CPU/memory cost N. */
  ln: number;
  /** Block size. */
  r: number;
  /** Parallelism. */
  p: number;
}

/**
 * N = 2^15, r = 8, p = 3: 32 MiB per hash, one of the equivalent minimums of OWASP's Password Storage Cheat Sheet
 * (N = 2^17 with p = 1 needs 128 MiB); docs/people.md#passwords gives its time.
 */
export const SCRYPT_PARAMETERS: ScryptParameters = { ln: 15, r: 8, p: 3 };
const SALT_BYTES = 16;
const HASH_BYTES = 32;
/** Bounds a stored hash may name: a forged row cannot make a verification take minutes or gigabytes. */
const BOUNDS = { ln: [10, 18], r: [1, 16], p: [1, 16] } as const;

/** The shortest password accepted when one is set (docs/people.md#passwords). */
export const PASSWORD_MIN_LENGTH = 12;
/** The longest: a password is hashed whole, so its length is bounded like any other input. */
export const PASSWORD_MAX_LENGTH = 1024;

function derive(password: string, salt: Buffer, params: ScryptParameters): Promise<Buffer> {
  const N = 2 ** params.ln;
  return new Promise((resolve, reject) =>
    scrypt(
      password.normalize('NFC'),
      salt,
      HASH_BYTES,
      // maxmem: twice the 128 * N * r bytes scrypt needs (node's default, 32 MiB, is exactly what N = 2^15 needs).
      { N, r: params.r, p: params.p, maxmem: 2 * 128 * N * params.r },
      (err, key) => (err ? reject(err) : resolve(key)),
    ),
  );
}

/** The stored form of `password`: a fresh salt, the current parameters. */
export async function hashPassword(password: string, params: ScryptParameters = SCRYPT_PARAMETERS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, params);
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

interface Parsed {
  params: ScryptParameters;
  salt: Buffer;
  hash: Buffer;
}

/** A stored hash's parts, or undefined when it is not one this module wrote (or names parameters out of bounds). */
export function parseStoredHash(stored: string): Parsed | undefined {
  const m = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(stored);
  if (!m) return undefined;
  const params = { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  for (const name of ['ln', 'r', 'p'] as const) {
    if (params[name] < BOUNDS[name][0] || params[name] > BOUNDS[name][1]) return undefined;
  }
  const salt = Buffer.from(m[4], 'base64url');
  const hash = Buffer.from(m[5], 'base64url');
  if (salt.length < SALT_BYTES || hash.length !== HASH_BYTES) return undefined;
  return { params, salt, hash };
}

/** Whether `password` is the one `stored` was made from; a malformed stored hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseStoredHash(stored);
  if (!parsed) {
    // As long as a real verification: the answer's time says nothing about the row.
    await derive(password, randomBytes(SALT_BYTES), SCRYPT_PARAMETERS);
    return false;
  }
  const candidate = await derive(password, parsed.salt, parsed.params);
  return timingSafeEqual(candidate, parsed.hash);
}

/** Whether a hash that verified was made with other parameters than today's (then it is stored again). */
export function needsRehash(stored: string): boolean {
  const parsed = parseStoredHash(stored);
  return (
    !parsed ||
    parsed.params.ln !== SCRYPT_PARAMETERS.ln ||
    parsed.params.r !== SCRYPT_PARAMETERS.r ||
    parsed.params.p !== SCRYPT_PARAMETERS.p
  );
}

let dummy: Promise<string> | undefined;

/**
 * A hash of a random password with today's parameters, made once per process: a sign-in for an unknown email,
 * or for a user without a password, is verified against it, so it takes the time a wrong password takes.
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(32).toString('base64url'));
  return dummy;
}
