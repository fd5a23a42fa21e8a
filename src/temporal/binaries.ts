// Where the Temporal binaries come from: an explicit path, else the pinned builds cached by
// tools/obtain-temporal.sh, else the SDK's own download (machines with internet).
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';

export const CLI_VERSION = 'v1.5.1';
export const TEST_SERVER_VERSION = '1.38.0';

type Executable = { type: 'existing-path'; path: string } | { type: 'cached-download' };

function pick(explicit: string | undefined, cached: string): Executable {
  if (explicit) return { type: 'existing-path', path: explicit };
  if (fs.existsSync(cached)) return { type: 'existing-path', path: cached };
  return { type: 'cached-download' };
}

export const temporalCli = (config: Config): Executable =>
  pick(config.temporal.cliPath, path.join(config.cacheDir, `temporal-cli-${CLI_VERSION}`, 'temporal'));

export const temporalTestServer = (config: Config): Executable =>
  pick(
    config.temporal.testServerPath,
    path.join(config.cacheDir, `temporal-test-server-${TEST_SERVER_VERSION}`, 'temporal-test-server'),
  );
