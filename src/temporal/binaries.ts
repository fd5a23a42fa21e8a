// Where the Temporal binaries come from: an explicit path, else the pinned builds cached by
// tools/obtain-temporal.sh, else the SDK's own download (machines with internet).
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';

export const CLI_VERSION = 'v1.5.1';
export const TEST_SERVER_VERSION = '1.38.0';

/**
 * The dev server's SQLite, when its state is in a file (`npm start`, the drills): write-ahead log, synced at every
 * commit. As durable as SQLite's default (a rollback journal, two syncs and a file created and deleted per
 * commit), and measured 2.9x faster for starts, signals and terminations at 10 in flight with ~30 % less server
 * CPU (bench/RESULTS.md, session 17).
 */
export const DEV_SERVER_SQLITE_ARGS = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=full'];

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
