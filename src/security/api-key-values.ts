import { hash, randomBytes } from 'node:crypto';

const PREFIX = 'tmk_';

/** A new key value: 256 random bits, URL-safe, with a recognizable prefix for secret scanners. */
export function newApiKeyValue(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

/** The only form a key is stored in (SHA-256). */
export function hashApiKey(value: string): Buffer {
  return Buffer.from(hashApiKeyHex(value), 'hex');
}

/** The stored form as hex: what every authenticated request computes (the one-shot hash, 5× createHash's speed). */
export function hashApiKeyHex(value: string): string {
  return hash('sha256', value, 'hex');
}
