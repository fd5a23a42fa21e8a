// `npm start`: the whole platform on one machine, with one command.
//
//   PostgreSQL with pgvector (unless DATABASE_URL) → Temporal dev server (unless TEMPORAL_ADDRESS)
//   → secrets key → migrations → first-start bootstrap → api + worker → wait until ready → banner.
//
// Two processes: this file runs as a small *launcher* that re-runs itself as the *supervisor* in a
// process group of its own. A Ctrl-C in the terminal is delivered to the whole foreground process
// group; without the second group PostgreSQL, the Temporal server, the api and the worker would all get
// it at once and stop in no particular order. The launcher forwards the signal to the supervisor, which
// stops the api and worker first (draining), then Temporal, then PostgreSQL. The supervisor watches a
// pipe from the launcher, so it also shuts everything down if the launcher is killed outright.
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Connection } from '@temporalio/client';
import { prettyFactory } from 'pino-pretty';
import { childEnv, Config, ConfigError, loadConfig } from '../config';
import { createDataSource, migrate } from '../persistence/data-source';
import { Organization } from '../persistence/entities';
import { bootstrapOrganization } from '../services/accounts';
import { temporalCli } from '../temporal/binaries';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes';
import { EMBEDDED_POSTGRES_DATABASE, RunningPostgres, startEmbeddedPostgres } from './postgres/embedded-postgres';

const SUPERVISOR_FLAG = '--supervise';
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const TEMPORAL_START_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 120_000;
/** Extra time, beyond SHUTDOWN_GRACE_MS, before an api or worker that ignores SIGTERM is killed. */
const KILL_MARGIN_MS = 5_000;
const TEMPORAL_STOP_TIMEOUT_MS = 15_000;

// ---------------------------------------------------------------------------------------------------
// Launcher

function launch(): void {
  const supervisor = spawn(process.execPath, [...process.execArgv, __filename, SUPERVISOR_FLAG], {
    detached: true, // own process group: terminal signals reach only us
    stdio: ['pipe', 'inherit', 'inherit'], // stdin: the liveness pipe the supervisor watches
  });
  const forward = (signal: NodeJS.Signals) => {
    supervisor.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal);
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, forward);
  supervisor.on('error', (err) => {
    console.error(`[start] could not start the supervisor: ${err.message}`);
    process.exit(1);
  });
  supervisor.on('exit', (code, signal) => {
    process.exit(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1));
  });
}

// ---------------------------------------------------------------------------------------------------
// Output

const tty = process.stdout.isTTY === true;
const paint = (code: string, s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
const bold = (s: string) => paint('1', s);
const red = (s: string) => paint('1;31', s);
const green = (s: string) => paint('32', s);

const PREFIX_WIDTH = 10;
const COLORS: Record<string, string> = { start: '1', api: '36', worker: '35', temporal: '33', postgres: '34' };
function prefix(name: string): string {
  return paint(COLORS[name] ?? '0', `[${name}]`.padEnd(PREFIX_WIDTH));
}

function say(message: string): void {
  for (const line of message.split('\n')) process.stdout.write(`${prefix('start')} ${line}\n`);
}

function shout(message: string): void {
  for (const line of message.split('\n')) process.stderr.write(`${prefix('start')} ${red(line)}\n`);
}

const pretty = prettyFactory({
  colorize: tty,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,component',
  singleLine: true,
});

/** One output line of a child: pino JSON is made readable, anything else is printed as it is. */
function printChildLine(name: string, line: string, toStderr: boolean): void {
  let text = line;
  if (line.startsWith('{')) {
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (typeof parsed.level === 'number' && 'msg' in parsed) text = pretty(parsed).trimEnd();
    } catch {
      // not JSON after all
    }
  }
  const out = toStderr ? process.stderr : process.stdout;
  for (const l of text.split('\n')) out.write(`${prefix(name)} ${l}\n`);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const home = (p: string) => (p.startsWith(os.homedir() + path.sep) ? `~${p.slice(os.homedir().length)}` : p);
const rel = (p: string) => {
  const r = path.relative(process.cwd(), p);
  return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : p;
};

// ---------------------------------------------------------------------------------------------------
// Child processes

type OnUnexpectedExit = (name: string, code: number | null, signal: NodeJS.Signals | null) => void;

class Child {
  readonly proc: ChildProcess;
  /** Set once we asked it to stop: its exit is then expected. */
  stopping = false;
  quiet = false;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    onUnexpectedExit: OnUnexpectedExit,
  ) {
    this.proc = spawn(command, args, { env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const [stream, isErr] of [[this.proc.stdout!, false], [this.proc.stderr!, true]] as const) {
      readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        if (!this.quiet) printChildLine(name, line, isErr);
      });
    }
    this.exited = new Promise((resolve) => {
      this.proc.on('error', (err) => {
        shout(`${name}: could not run ${command}: ${err.message}`);
        resolve({ code: null, signal: null });
        if (!this.stopping) onUnexpectedExit(name, null, null);
      });
      this.proc.on('exit', (code, signal) => {
        resolve({ code, signal });
        if (!this.stopping) onUnexpectedExit(name, code, signal);
      });
    });
  }

  get running(): boolean {
    return this.proc.pid !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Asks it to stop with `signal`; after `timeoutMs` kills it. Resolves once it has exited. */
  async stop(signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
    this.stopping = true;
    if (!this.running) return;
    const timer = setTimeout(() => {
      shout(`${this.name} did not stop within ${seconds(timeoutMs)}; killing it`);
      this.proc.kill('SIGKILL');
    }, timeoutMs);
    this.proc.kill(signal);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): void {
    this.stopping = true;
    if (this.running) this.proc.kill('SIGKILL');
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `killed by ${signal}`;
  if (code === null) return 'failed to start';
  return `exit code ${code}`;
}

// ---------------------------------------------------------------------------------------------------
// Supervisor

interface Running {
  postgres?: RunningPostgres;
  temporal?: Child;
  /** The SDK-managed dev server (no Temporal CLI cached and no Go to build one). */
  temporalEnv?: { teardown(): Promise<void> };
  api?: Child;
  worker?: Child;
}

async function supervise(): Promise<void> {
  const running: Running = {};
  let stopping: Promise<void> | undefined;
  let firstSignalAt = 0;
  let bootstrapKey: string | undefined;
  let ready = false;

  const shutdown = (exitCode: number, reason: string): Promise<void> => {
    stopping ??= (async () => {
      say(reason);
      const { api, worker, temporal } = running;
      const grace = config ? config.shutdownGraceMs + KILL_MARGIN_MS : KILL_MARGIN_MS;
      await Promise.all([api?.stop('SIGTERM', grace), worker?.stop('SIGTERM', grace)]);
      if (api || worker) say('api and worker stopped');
      if (temporal) {
        temporal.quiet = true; // its shutdown is noisy about connections it is closing itself
        await temporal.stop('SIGTERM', TEMPORAL_STOP_TIMEOUT_MS);
        say('Temporal dev server stopped');
      }
      if (running.temporalEnv) {
        await running.temporalEnv.teardown().catch((err) => shout(`Temporal dev server: ${err}`));
        say('Temporal dev server stopped');
      }
      if (running.postgres) {
        await running.postgres.stop().catch((err) => shout(`PostgreSQL: ${err}`));
        say('PostgreSQL stopped');
      }
      if (bootstrapKey && !ready) {
        say(`The API key created on this first start (it will not be shown again):\n  ${bootstrapKey}`);
      }
      say(exitCode === 0 ? 'stopped' : red(`stopped (exit ${exitCode})`));
      process.exit(exitCode);
    })();
    return stopping;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) {
      firstSignalAt = Date.now();
      void shutdown(0, `${signal}: stopping api and worker, then Temporal, then PostgreSQL...`);
    } else if (Date.now() - firstSignalAt > 2000) {
      // A deliberate second Ctrl-C (not the same one delivered twice by npm and the terminal).
      shout(`${signal} again: killing the api, worker and Temporal now`);
      running.api?.kill();
      running.worker?.kill();
      running.temporal?.kill();
    }
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
  // A bug here must not leave the children running without their supervisor.
  const onCrash = (err: unknown) => {
    shout(`supervisor error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    void shutdown(1, 'stopping everything after the error above');
  };
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  // The launcher holds the other end of stdin: end of file means it is gone.
  process.stdin.on('end', () => void shutdown(1, 'the launcher went away: stopping everything'));
  process.stdin.on('error', () => undefined);
  process.stdin.resume();

  const onUnexpectedExit: OnUnexpectedExit = (name, code, signal) => {
    if (stopping) return;
    shout('');
    shout(`!!! ${name} exited unexpectedly (${describeExit(code, signal)}); stopping everything`);
    shout('');
    void shutdown(1, `stopping because ${name} exited`);
  };

  let config: Config | undefined;
  try {
    try {
      config = loadConfig();
    } catch (err) {
      if (err instanceof ConfigError) {
        shout(err.message);
        process.exit(2);
      }
      throw err;
    }
    await run(config, running, onUnexpectedExit, {
      isStopping: () => stopping !== undefined,
      setBootstrapKey: (k) => (bootstrapKey = k),
      setReady: () => (ready = true),
    });
  } catch (err) {
    if (stopping) return; // failures caused by the shutdown itself
    shout(err instanceof Error ? err.message : String(err));
    await shutdown(1, 'start failed; stopping what was started');
  }
}

/** Thrown to abandon the start sequence once a shutdown has begun. */
class Stopped extends Error {}

async function run(
  config: Config,
  running: Running,
  onUnexpectedExit: OnUnexpectedExit,
  hooks: { isStopping(): boolean; setBootstrapKey(key: string): void; setReady(): void },
): Promise<void> {
  const step = () => {
    if (hooks.isStopping()) throw new Stopped();
  };
  const local = { postgres: !config.databaseUrl, temporal: !config.temporal.address };
  fs.mkdirSync(config.dataDir, { recursive: true });
  // Others may pass through (as root, the local PostgreSQL runs as its own user; a sandboxed run reaches
  // its build by its path), never list it; the blobs are the platform's alone.
  fs.chmodSync(config.dataDir, 0o711);
  fs.mkdirSync(config.blobDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(config.blobDir, 0o700);
  say(`starting tarmac (data in ${rel(config.dataDir)})`);
  if (config.sandbox.mode === 'off') {
    say(red('WARNING: SANDBOX=off: user code runs as the worker user, unisolated. Single-tenant development only.'));
  } else {
    await runTool('obtain-sandbox.sh', [], 'Install bubblewrap and iptables (Debian: apt-get install bubblewrap iptables), or set SANDBOX=off for single-tenant development only.');
  }

  // 1. The binaries, pinned and cached in ~/.cache/tarmac: PostgreSQL with pgvector (downloaded once, in
  //    seconds) and the Temporal CLI (built once, in minutes).
  if (local.postgres) {
    await runTool('obtain-postgres.sh', [], 'Set EMBEDDED_POSTGRES_BIN_DIR to the bin directory of a PostgreSQL 18 with pgvector, or DATABASE_URL to a PostgreSQL server with pgvector.');
    step();
  }
  if (local.temporal && temporalCli(config).type === 'cached-download') {
    say('Temporal CLI not cached yet (first start only): running tools/obtain-temporal.sh --cli-only');
    say('(building it from source with Go takes a few minutes; later starts reuse ~/.cache/tarmac)');
    await obtainTemporalCli();
    step();
  }

  // 2. Ports we are about to bind must be free (a clear message instead of a crash later).
  const ports: Array<[string, number, string]> = [['api (PORT)', config.port, config.host]];
  if (local.postgres) ports.push(['PostgreSQL (EMBEDDED_POSTGRES_PORT)', config.embeddedPostgresPort, '127.0.0.1']);
  if (local.temporal) {
    ports.push(['Temporal (TEMPORAL_DEV_PORT)', config.temporal.devPort, '127.0.0.1']);
    ports.push(['Temporal UI (TEMPORAL_DEV_UI_PORT)', config.temporal.devUiPort, '127.0.0.1']);
  }
  const busy: string[] = [];
  for (const [what, port, host] of ports) {
    if (!(await portFree(port, host))) busy.push(`port ${port} for ${what} is already in use`);
  }
  if (busy.length) {
    throw new Error(`${busy.join('\n')}\nIs another \`npm start\` running? Stop it, or choose other ports with the variables named above.`);
  }

  // 3. PostgreSQL.
  let databaseUrl: string;
  if (local.postgres) {
    const dir = path.join(config.dataDir, 'postgres');
    const fresh = !fs.existsSync(path.join(dir, 'PG_VERSION'));
    say(`PostgreSQL: ${fresh ? 'initialising' : 'starting'} the local server (data in ${rel(dir)}, port ${config.embeddedPostgresPort})...`);
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
    databaseUrl = running.postgres.url;
    say(`PostgreSQL ${running.postgres.version}: ready on localhost:${config.embeddedPostgresPort} (${seconds(Date.now() - t0)})`);
  } else {
    databaseUrl = config.databaseUrl!;
    say('PostgreSQL: using DATABASE_URL');
  }
  step();

  // 4. Temporal.
  const temporalAddress = config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;
  if (local.temporal) {
    const t0 = Date.now();
    const dbFile = path.join(config.dataDir, 'temporal.sqlite');
    const cli = temporalCli(config);
    if (cli.type === 'existing-path') {
      say(`Temporal: starting dev server ${home(cli.path)} (state in ${rel(dbFile)})...`);
      const args = [
        'server', 'start-dev',
        '--ip', '127.0.0.1',
        '--port', String(config.temporal.devPort),
        '--ui-port', String(config.temporal.devUiPort),
        '--db-filename', dbFile,
        '--namespace', config.temporal.namespace,
        ...SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]),
        '--log-level', 'warn',
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
    await waitForTemporal(temporalAddress, config.temporal.namespace, TEMPORAL_START_TIMEOUT_MS, running.temporal, hooks.isStopping);
    say(`Temporal: ready on ${temporalAddress}, Web UI on http://localhost:${config.temporal.devUiPort} (${seconds(Date.now() - t0)})`);
  } else {
    say(`Temporal: using TEMPORAL_ADDRESS=${temporalAddress}`);
    await waitForTemporal(temporalAddress, config.temporal.namespace, 30_000, undefined, hooks.isStopping);
  }
  step();

  // 5. Secrets key.
  const secretsKey = readOrCreateSecretsKey(config);
  step();

  // 6. Migrations and, on an empty database, the first organization, user and key.
  let bootstrapKey: string | undefined;
  const ds = await createDataSource(databaseUrl, { applicationName: 'tarmac-start', poolSize: 2 }).initialize();
  try {
    const ran = await migrate(ds);
    say(ran.length ? `migrations: applied ${ran.join(', ')}` : 'migrations: database is up to date');
    if ((await ds.getRepository(Organization).count()) === 0) {
      const { organization, user, value } = await bootstrapOrganization(ds, {
        organizationName: config.bootstrap.organizationName,
        email: config.bootstrap.email,
        keyName: 'created by npm start',
      });
      bootstrapKey = value;
      hooks.setBootstrapKey(value);
      say(`first start: created organization "${organization.name}" (${organization.organization_id}), user ${user.email} and an API key`);
    }
  } finally {
    await ds.destroy();
  }
  step();

  // 7. The api and the worker.
  const env = childEnv({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    SECRETS_KEY: secretsKey,
    DATA_DIR: config.dataDir,
    BLOB_DIR: config.blobDir,
  });
  say('starting the api and the worker...');
  const t0 = Date.now();
  running.api = new Child('api', process.execPath, [path.join(REPO_ROOT, 'dist', 'src', 'api', 'main.js')], env, onUnexpectedExit);
  running.worker = new Child('worker', process.execPath, [path.join(REPO_ROOT, 'dist', 'src', 'worker', 'main.js')], env, onUnexpectedExit);
  await Promise.all([
    waitForApi(config, hooks.isStopping),
    waitForWorker(temporalAddress, config, running.worker.proc.pid!, hooks.isStopping),
  ]);
  step();
  hooks.setReady();
  say(`api and worker ready (${seconds(Date.now() - t0)})`);
  printBanner(config, bootstrapKey);
}

// ---------------------------------------------------------------------------------------------------
// Steps

function obtainTemporalCli(): Promise<void> {
  return runTool('obtain-temporal.sh', ['--cli-only'], 'Set TEMPORAL_CLI_PATH to a `temporal` binary, or TEMPORAL_ADDRESS to a running Temporal server.');
}

/** Runs a script of tools/, its lines shown as progress; on failure, `advice` says what to do instead. */
function runTool(script: string, args: string[], advice: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const proc = spawn('bash', [path.join(REPO_ROOT, 'tools', script), ...args], {
      cwd: REPO_ROOT,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [proc.stdout, proc.stderr]) {
      readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (l) => say(`  ${l}`));
    }
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`tools/${script} failed (${describeExit(code, signal)}).\n${advice}`));
    });
  });
}

function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

function readOrCreateSecretsKey(config: Config): string {
  if (config.secretsKey) {
    say('secrets key: from SECRETS_KEY');
    return config.secretsKey.toString('base64');
  }
  const file = path.join(config.dataDir, 'secrets.key');
  if (fs.existsSync(file)) {
    const value = fs.readFileSync(file, 'utf8').trim();
    if (Buffer.from(value, 'base64').length !== 32) {
      throw new Error(`${file} does not hold a base64-encoded 32-byte key. Restore it from a backup: secrets stored with it cannot be read without it.`);
    }
    say(`secrets key: ${rel(file)}`);
    return value;
  }
  const value = randomBytes(32).toString('base64');
  fs.writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  say(`secrets key: created ${rel(file)} (mode 0600; back it up with the database: stored secrets need it)`);
  return value;
}

async function waitForTemporal(
  address: string,
  namespace: string,
  timeoutMs: number,
  server: Child | undefined,
  isStopping: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (isStopping()) throw new Stopped();
    if (server && !server.running) throw new Error('the Temporal dev server exited while starting (see its output above)');
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
      await sleep(300);
    }
  }
  throw new Error(
    `Temporal did not accept connections on ${address} (namespace ${namespace}) within ${seconds(timeoutMs)}.\n` +
      `Last error: ${last}`,
  );
}

async function waitForApi(config: Config, isStopping: () => boolean): Promise<void> {
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}/ready`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (isStopping()) throw new Stopped();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(300);
  }
  throw new Error(`the api did not answer 200 on ${url} within ${seconds(READY_TIMEOUT_MS)}. Last: ${last}`);
}

/** The worker is ready once Temporal lists it (by its identity, `<pid>@<host>`) among the task queue's pollers. */
async function waitForWorker(address: string, config: Config, pid: number, isStopping: () => boolean): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (isStopping()) throw new Stopped();
      const res = await connection.workflowService.describeTaskQueue({
        namespace: config.temporal.namespace,
        taskQueue: { name: config.temporal.taskQueue },
        taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
      });
      if ((res.pollers ?? []).some((p) => p.identity?.startsWith(`${pid}@`))) return;
      await sleep(300);
    }
    throw new Error(`the worker did not poll task queue ${config.temporal.taskQueue} within ${seconds(READY_TIMEOUT_MS)}`);
  } finally {
    await connection.close();
  }
}

/** Which model providers assistant runs and chat messages use, or how to configure one (README: Model providers). */
function modelsLine(config: Config): string {
  const names = Object.keys(config.models.providers);
  if (!names.length) return 'none: set OPENAI_API_KEY, or MODEL_PROVIDERS=ollama=http://127.0.0.1:11434/v1 (README)';
  return `${names.join(', ')}; default ${config.models.defaultModel ?? '(none: set DEFAULT_MODEL)'}`;
}

function printBanner(config: Config, bootstrapKey: string | undefined): void {
  const base = config.publicBaseUrl;
  const ui = config.temporal.uiUrl ?? (config.temporal.address ? undefined : `http://localhost:${config.temporal.devUiPort}`);
  const rule = '-'.repeat(78);
  const lines = [
    rule,
    bold('tarmac is running'),
    '',
    `  API           ${base}/api`,
    `  OpenAPI       ${base}/api/openapi.json`,
    `  Temporal UI   ${ui ?? '(set TEMPORAL_UI_URL to show it here)'}`,
    `  Data          ${config.databaseUrl ? 'DATABASE_URL' : rel(path.join(config.dataDir, 'postgres'))}` +
      (config.temporal.address ? '' : `, ${rel(path.join(config.dataDir, 'temporal.sqlite'))}`) +
      `, blobs in ${rel(config.blobDir)}`,
    `  Models        ${modelsLine(config)}`,
    `  User code     ${config.sandbox.mode === 'on' ? 'sandboxed (docs/security.md)' : red('NOT isolated (SANDBOX=off): single-tenant development only')}`,
    '',
  ];
  if (bootstrapKey) {
    lines.push(
      `  Your API key (${config.bootstrap.email}, organization "${config.bootstrap.organizationName}").`,
      '  It is shown only now; it keeps working across restarts:',
      '',
      `    ${green(bootstrapKey)}`,
      '',
      '  Try it:',
      `    export TARMAC_API_KEY=${bootstrapKey}`,
    );
  } else {
    lines.push(
      '  API key: shown on the first start (old keys keep working). To make another, in a second terminal:',
      `    npm run admin -- create-api-key --name "my key" --email ${config.bootstrap.email}`,
      '',
      '  Try it:',
      '    export TARMAC_API_KEY=<your key>',
    );
  }
  lines.push(
    `    curl -H "Authorization: Bearer $TARMAC_API_KEY" ${base}/api/users`,
    '',
    'Ctrl-C stops everything.',
    rule,
  );
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
}

if (process.argv.includes(SUPERVISOR_FLAG)) void supervise();
else launch();
