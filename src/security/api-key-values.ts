import { createHash, randomBytes } from 'node:crypto';

const PREFIX = 'tmk_';

/** A new key value: 256 random bits, URL-safe, with a recognizable prefix for secret scanners. */
export function newApiKeyValue(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

/** The only form a key is stored in. */
export function hashApiKey(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
