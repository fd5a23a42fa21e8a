// The local PostgreSQL and the local Temporal dev server, for when DATABASE_URL / TEMPORAL_ADDRESS are
// unset. Both keep their state in DATA_DIR (`postgres/`, `temporal.sqlite`) and listen on 127.0.0.1 only.
// Each is recorded in `running` as soon as it is started (PostgreSQL: once it accepts connections; until
// then its launcher stops it itself should this process exit), so a shutdown stops it; an exit the
// supervisor did not ask for is reported to `onUnexpectedExit`. Each function returns once it is ready.
import fs from 'node:fs';
import path from 'node:path';
import { childEnv, Config } from '../../config';
import { DEV_SERVER_SQLITE_ARGS, temporalCli } from '../../temporal/binaries';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes';
import { EMBEDDED_POSTGRES_DATABASE, startEmbeddedPostgres } from '../postgres/embedded-postgres';
import { Child, OnUnexpectedExit, printChildLine } from './children';
import { home, rel, say, seconds } from './output';
import { waitForTemporal } from './readiness';
import type { Running } from './running';

const TEMPORAL_START_TIMEOUT_MS = 60_000;

/** PostgreSQL with pgvector, data in `<DATA_DIR>/postgres` (initialised on first use); its warnings and errors shown. */
export async function startLocalPostgres(
  config: Config,
  running: Running,
  onUnexpectedExit: OnUnexpectedExit,
): Promise<void> {
  const dir = path.join(config.dataDir, 'postgres');
  const fresh = !fs.existsSync(path.join(dir, 'PG_VERSION'));
  say(
    `PostgreSQL: ${fresh ? 'initialising' : 'starting'} the local server (data in ${rel(dir)}, port ${config.embeddedPostgresPort})...`,
  );
  const t0 = Date.now();
  running.postgres = await startEmbeddedPostgres({
    dir,
    port: config.embeddedPostgresPort,
    database: EMBEDDED_POSTGRES_DATABASE,
    persistent: true,
    config,
    onLog: (line) => {
      if (/\b(WARNING|ERROR|FATAL|PANIC):/.test(line)) printChildLine('postgres', line, true);
    },
  });
  running.postgres.onUnexpectedExit((code, signal) => onUnexpectedExit('PostgreSQL', code, signal));
  say(
    `PostgreSQL ${running.postgres.version}: ready on localhost:${config.embeddedPostgresPort} (${seconds(Date.now() - t0)})`,
  );
}

/**
 * `temporal server start-dev` with the search attributes registered, state in `<DATA_DIR>/temporal.sqlite`,
 * the Web UI on TEMPORAL_DEV_UI_PORT; without a CLI, the one the Temporal SDK downloads.
 */
export async function startLocalTemporal(
  config: Config,
  address: string,
  running: Running,
  onUnexpectedExit: OnUnexpectedExit,
  isStopping: () => boolean,
): Promise<void> {
  const t0 = Date.now();
  const dbFile = path.join(config.dataDir, 'temporal.sqlite');
  const cli = temporalCli(config);
  if (cli.type === 'existing-path') {
    say(`Temporal: starting dev server ${home(cli.path)} (state in ${rel(dbFile)})...`);
    const args = [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(config.temporal.devPort),
      '--ui-port',
      String(config.temporal.devUiPort),
      '--db-filename',
      dbFile,
      ...DEV_SERVER_SQLITE_ARGS,
      '--namespace',
      config.temporal.namespace,
      ...SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]),
      '--log-level',
      'warn',
    ];
    running.temporal = new Child('temporal', cli.path, args, childEnv(), onUnexpectedExit);
  } else {
    // No cached CLI and no Go to build one: the SDK downloads the CLI (needs internet) and runs it
    // the same way, as a child of this process. Kept simple: the same flags, via TestWorkflowEnvironment.
    say('Temporal: no cached CLI; letting the Temporal SDK download and start the dev server...');
    const { TestWorkflowEnvironment } = await import('@temporalio/testing');
    running.temporalEnv = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'cached-download' },
        ip: '127.0.0.1',
        port: config.temporal.devPort,
        ui: true,
        uiPort: config.temporal.devUiPort,
        dbFilename: dbFile,
        extraArgs: DEV_SERVER_SQLITE_ARGS,
        namespace: config.temporal.namespace,
        searchAttributes: SEARCH_ATTRIBUTES,
        log: { format: 'pretty', level: 'warn' },
      },
    }).catch((err: Error) => {
      throw new Error(
        `Could not download or start the Temporal dev server: ${err.message}\n` +
          'Install Go (then the CLI is built from source on the next start), or set TEMPORAL_CLI_PATH to a `temporal` binary, or TEMPORAL_ADDRESS to a running server.',
      );
    });
  }
  await waitForTemporal(address, config.temporal.namespace, TEMPORAL_START_TIMEOUT_MS, running.temporal, isStopping);
  say(
    `Temporal: ready on ${address}, Web UI on http://localhost:${config.temporal.devUiPort} (${seconds(Date.now() - t0)})`,
  );
}
