// The local default database (`npm start`, the test stack, the drills): PostgreSQL with pgvector from the
// pinned binaries (binaries.ts), run by this launcher. `initdb` once (scram-sha-256, a generated
// password), then `postgres` as a child process listening on localhost only (or the one address it is given:
// the production shape's database host), no Unix socket.
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { Client } from 'pg';
import type { Config } from '../../config';
import { postgresBinaries } from './binaries';
import { checkVersion, initdb, passwordFileOf, prepareDataDir } from './data-dir';
import { asUser, postgresOsUser } from './os-user';

/** Role of the embedded server; its password is generated on first start (see embeddedPassword). */
export const EMBEDDED_POSTGRES_USER = 'tarmac';
/** What data directories initialised before passwords were generated were given; rotated on their next start. */
const LEGACY_PASSWORD = 'tarmac-local';
/** Database `npm start` uses on the embedded server. */
export const EMBEDDED_POSTGRES_DATABASE = 'tarmac';
/** Crash recovery of a large data directory can take a while; a start that fails fails fast (the process exits). */
const READY_TIMEOUT_MS = 300_000;
/** After a fast shutdown (SIGINT) takes this long, an immediate one (SIGQUIT). */
const STOP_TIMEOUT_MS = 30_000;

export { passwordFileOf };

/** The password of the embedded server whose data is in `dir`; undefined before its first start. */
export function embeddedPassword(dir: string): string | undefined {
  try {
    return fs.readFileSync(passwordFileOf(dir), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** URL of a database on the embedded server (what `npm start` gives the api and worker, and `npm run admin` uses). */
export function embeddedPostgresUrl(
  port: number,
  password: string,
  database = EMBEDDED_POSTGRES_DATABASE,
  host = 'localhost',
): string {
  return `postgres://${EMBEDDED_POSTGRES_USER}:${encodeURIComponent(password)}@${host}:${port}/${database}`;
}

export interface RunningPostgres {
  url: string;
  /** PostgreSQL's version, e.g. `18.4`. */
  version: string;
  stop(): Promise<void>;
  /** Called if the server exits without `stop()` (crash, killed from outside). */
  onUnexpectedExit(cb: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/**
 * Starts PostgreSQL with its data in `dir` (initialised on first use) and makes sure `database` exists.
 * `persistent: false` removes the data directory on stop.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string;
  port: number;
  /** The one address it listens on (default localhost). */
  host?: string;
  database: string;
  persistent: boolean;
  /** Which binaries (config.embeddedPostgresBinDir, else the pinned build in config.cacheDir). */
  config: Pick<Config, 'cacheDir' | 'embeddedPostgresBinDir'>;
  onLog?: (line: string) => void;
}): Promise<RunningPostgres> {
  const runAs = postgresOsUser();
  const bin = postgresBinaries(opts.config, runAs);
  const fresh = !fs.existsSync(path.join(opts.dir, 'PG_VERSION'));
  if (!fresh) checkVersion(opts.dir, bin);
  // Always a password, never trust: generated on the first start; a data directory from before that is
  // started with the old fixed one and given a new one below.
  const kept = embeddedPassword(opts.dir);
  const password = kept ?? randomBytes(24).toString('base64url');
  const rotate = kept === undefined && !fresh;
  prepareDataDir(opts.dir, runAs);
  if (fresh) await initdb(bin, opts.dir, EMBEDDED_POSTGRES_USER, password, runAs);
  if (kept === undefined) fs.writeFileSync(passwordFileOf(opts.dir), `${password}\n`, { mode: 0o600 });

  // The last lines the server printed, for an error message that says why it did not start.
  const recent: string[] = [];
  const server = spawn(
    path.join(bin.binDir, 'postgres'),
    [
      '-D',
      opts.dir,
      '-p',
      String(opts.port),
      '-c',
      `listen_addresses=${opts.host ?? 'localhost'}`,
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
    ],
    { ...asUser(runAs), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  for (const stream of [server.stdout!, server.stderr!]) {
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      recent.push(line);
      if (recent.length > 20) recent.shift();
      opts.onLog?.(line);
    });
  }
  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) => {
    server.once('error', (err) => {
      recent.push(err.message);
      resolve((exit ??= { code: null, signal: null }));
    });
    // 'close': also its output has been read, for the error message below.
    server.once('close', (code, signal) => resolve((exit ??= { code, signal })));
  });
  // If this process exits without stopping it (a crash, process.exit), the server still shuts down.
  const onProcessExit = () => {
    if (!exit) server.kill('SIGINT');
  };
  process.on('exit', onProcessExit);

  let client: Client;
  try {
    client = await connectWhenReady(
      opts.host ?? 'localhost',
      opts.port,
      rotate ? LEGACY_PASSWORD : password,
      () => exit,
    );
  } catch (err) {
    process.removeListener('exit', onProcessExit);
    if (!exit) server.kill('SIGQUIT');
    await exited;
    throw new Error(
      `PostgreSQL did not start (data ${opts.dir}, port ${opts.port}): ${(err as Error).message}\n${recent.join('\n')}`,
    );
  }
  try {
    if (rotate) await client.query(`ALTER ROLE ${EMBEDDED_POSTGRES_USER} PASSWORD '${password}'`);
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [opts.database]);
    if (!exists.rowCount) await client.query(`CREATE DATABASE "${opts.database.replace(/"/g, '')}"`);
  } catch (err) {
    process.removeListener('exit', onProcessExit);
    await stopServer(server, exited, () => exit);
    throw err;
  } finally {
    await client.end();
  }

  let stopping = false;
  return {
    url: embeddedPostgresUrl(opts.port, password, opts.database, opts.host),
    version: bin.version,
    stop: async () => {
      stopping = true;
      process.removeListener('exit', onProcessExit);
      await stopServer(server, exited, () => exit);
      if (!opts.persistent) {
        fs.rmSync(opts.dir, { recursive: true, force: true });
        fs.rmSync(passwordFileOf(opts.dir), { force: true });
      }
    },
    onUnexpectedExit: (cb) => {
      void exited.then(({ code, signal }) => {
        if (!stopping) cb(code, signal);
      });
    },
  };
}

/** A connection once the server accepts ours; fails as soon as the server exits or keeps refusing the password. */
async function connectWhenReady(
  host: string,
  port: number,
  password: string,
  exited: () => Exit | undefined,
): Promise<Client> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  let refused = 0;
  while (Date.now() < deadline) {
    const e = exited();
    if (e) throw new Error(`it exited (${e.signal ?? `code ${e.code}`})`);
    const client = new Client({
      host,
      port,
      user: EMBEDDED_POSTGRES_USER,
      password,
      database: 'postgres',
      connectionTimeoutMillis: 2000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (err) {
      last = (err as Error).message;
      // A second of refusals while it runs: not a server still starting, a password file that does not fit.
      if ((err as { code?: string }).code === '28P01' && ++refused >= 10)
        throw new Error(`it refuses the password of ${EMBEDDED_POSTGRES_USER}: ${last}`);
      await client.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`no connection within ${READY_TIMEOUT_MS / 1000} s (last: ${last})`);
}

/** Fast shutdown (SIGINT: sessions end, a checkpoint is written); immediate (SIGQUIT) if that hangs. */
async function stopServer(server: ChildProcess, exited: Promise<Exit>, exit: () => Exit | undefined): Promise<void> {
  if (exit()) return;
  server.kill('SIGINT');
  const timer = setTimeout(() => server.kill('SIGQUIT'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
