// Local state: where `npm start` keeps its data and the pinned binaries, and what it creates on its first start.
import os from 'node:os';
import path from 'node:path';
import type { EnvReader } from './env';

export interface LocalSettings {
  dataDir: string;
  /** Where tools/obtain-temporal.sh and tools/obtain-postgres.sh cache the pinned binaries. */
  cacheDir: string;
  /** What `npm start` creates on its first start (empty database). */
  bootstrap: { organizationName: string; email: string };
}

export function readLocal(env: EnvReader): LocalSettings {
  const email = env.string('BOOTSTRAP_EMAIL', 'admin@localhost').toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) env.problem('BOOTSTRAP_EMAIL must be an email address');
  return {
    dataDir: path.resolve(env.string('DATA_DIR', '.data')),
    cacheDir: path.resolve(env.string('TARMAC_CACHE_DIR', path.join(os.homedir(), '.cache', 'tarmac'))),
    bootstrap: { organizationName: env.string('BOOTSTRAP_ORGANIZATION', 'Default'), email },
  };
}
