// Random tokens handed to a person once and stored only as hashes: session cookies, CSRF tokens, password-reset
// links. Like API keys they carry 256 random bits, so a fast hash (SHA-256) is enough to store them: nothing
// can be guessed from it, and no salt or slow hash would add anything.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 random bits, URL- and cookie-safe (base64url). */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The only form a token is stored in. */
export function hashSecretToken(value: string): Buffer {
  return Buffer.from(hash('sha256', value, 'hex'), 'hex');
}

/** Whether two token values are the same, in a time that does not depend on where they differ. */
export function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
