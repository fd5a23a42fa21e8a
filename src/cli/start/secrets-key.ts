// The key that encrypts secrets at rest: SECRETS_KEY, else `<DATA_DIR>/secrets.key`, created on the first
// start (32 random bytes, base64, mode 0600, never overwritten). A key file that does not hold a 32-byte
// key stops the start: secrets stored with the right key could not be read without it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config';
import { rel, say } from './output';

/** The key as base64, what the api and worker get in SECRETS_KEY. */
export function readOrCreateSecretsKey(config: Config): string {
  if (config.secretsKey) {
    say('secrets key: from SECRETS_KEY');
    return config.secretsKey.toString('base64');
  }
  const file = path.join(config.dataDir, 'secrets.key');
  if (fs.existsSync(file)) {
    const value = fs.readFileSync(file, 'utf8').trim();
    if (Buffer.from(value, 'base64').length !== 32) {
      throw new Error(
        `${file} does not hold a base64-encoded 32-byte key. Restore it from a backup: secrets stored with it cannot be read without it.`,
      );
    }
    say(`secrets key: ${rel(file)}`);
    return value;
  }
  const value = randomBytes(32).toString('base64');
  fs.writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  say(`secrets key: created ${rel(file)} (mode 0600; back it up with the database: stored secrets need it)`);
  return value;
}
