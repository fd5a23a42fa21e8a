// The key of secrets at rest.
import type { EnvReader } from './env';

export interface SecretsSettings {
  /** AES-256-GCM key for secrets at rest; HMAC keys for presigned URLs are derived from it. */
  secretsKey: Buffer | undefined;
}

export function readSecrets(env: EnvReader): SecretsSettings {
  const raw = env.optional('SECRETS_KEY');
  if (raw === undefined) return { secretsKey: undefined };
  const secretsKey = Buffer.from(raw, 'base64');
  if (secretsKey.length !== 32)
    env.problem('SECRETS_KEY must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)');
  return { secretsKey };
}
