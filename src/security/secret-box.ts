import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 1;

/**
 * AES-256-GCM for secrets at rest. Envelope: version(1) | iv(12) | tag(16) | ciphertext.
 * The record's id is bound as additional data, so a ciphertext copied onto another row fails to open.
 */
export class SecretBox {
  private readonly encKey: Buffer;
  private readonly signKey: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('secrets key must be 32 bytes');
    this.encKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'tarmac secrets v1', 32));
    this.signKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'tarmac url signing v1', 32));
  }

  seal(plaintext: string, boundTo: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.encKey, iv);
    cipher.setAAD(Buffer.from(boundTo, 'utf8'));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ct]);
  }

  open(envelope: Buffer, boundTo: string): string {
    if (envelope[0] !== VERSION) throw new Error('unknown secret envelope version');
    const decipher = createDecipheriv('aes-256-gcm', this.encKey, envelope.subarray(1, 13));
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(envelope.subarray(13, 29));
    return Buffer.concat([decipher.update(envelope.subarray(29)), decipher.final()]).toString('utf8');
  }

  /** HMAC-SHA256 (base64url) with a key derived for signing URLs, separate from the encryption key. */
  sign(message: string): string {
    return createHmac('sha256', this.signKey).update(message, 'utf8').digest('base64url');
  }
}
