// The processes of a drill: real api processes, worker processes and a Temporal dev server it may kill, each
// tracked so that none outlives the drill (nor an interrupted runner).
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { childEnv } from '../../src/config';
import { formatOutboundAllow } from '../../src/security/outbound-policy';
import { DEV_SERVER_SQLITE_ARGS, temporalCli } from '../../src/temporal/binaries';
import { SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';
import { freePort, getStack } from '../harness/stack';
import { Findings, pidAlive, until } from './kit';

const DIST = path.resolve(__dirname, '..', '..');

export interface DrillChild {
  name: string;
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines it printed (for error messages). */
  tail(): string;
  /** The last line it printed that contains `text` (e.g. a request id in the api's error log). */
  find(text: string): string | undefined;
  readonly running: boolean;
}

/**
 * The child processes of one drill. Every one is tracked, so that whatever happens (a failed check, an
 * exception) `stopAll` leaves none behind: SIGTERM, then SIGKILL after a grace period.
 */
export class Processes {
  private readonly children: DrillChild[] = [];

  constructor() {
    live.add(this);
  }

  spawn(name: string, file: string, args: string[], env: NodeJS.ProcessEnv): DrillChild {
    const proc = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const keep = (d: Buffer) => {
      lines.push(...String(d).split('\n').filter(Boolean));
      if (lines.length > 5000) lines.splice(0, lines.length - 5000);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      proc.on('exit', (code, signal) => resolve({ code, signal }));
      proc.on('error', () => resolve({ code: null, signal: null }));
    });
    const child: DrillChild = {
      name,
      proc,
      exited,
      tail: () => lines.slice(-40).join('\n'),
      find: (text) => [...lines].reverse().find((l) => l.includes(text)),
      get running() {
        return proc.exitCode === null && proc.signalCode === null;
      },
    };
    this.children.push(child);
    return child;
  }

  /** Waits until `line` appears in its output; fails if it exits first. */
  async waitForLine(child: DrillChild, line: RegExp, timeoutMs = 60_000): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(
        () => reject(new Error(`${child.name} printed no ${line} within ${timeoutMs} ms:\n${child.tail()}`)),
        timeoutMs,
      );
      const onData = (d: Buffer) => {
        seen += String(d);
        if (line.test(seen)) {
          clearTimeout(timer);
          child.proc.stdout!.off('data', onData);
          resolve();
        }
      };
      child.proc.stdout!.on('data', onData);
      void child.exited.then((e) => {
        clearTimeout(timer);
        reject(new Error(`${child.name} exited (${e.code ?? e.signal}) before it was ready:\n${child.tail()}`));
      });
    });
  }

  async kill(child: DrillChild, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (child.running) child.proc.kill(signal);
    await child.exited;
  }

  /**
   * Stops every child still running (SIGTERM, SIGKILL after `graceMs`), then checks that none is left: a
   * process that needed SIGKILL or survives is a finding.
   */
  async stopAll(f: Findings, graceMs = 15_000): Promise<void> {
    const alive = this.children.filter((c) => c.running);
    for (const c of alive) c.proc.kill('SIGTERM');
    await Promise.all(
      alive.map(async (c) => {
        const timer = setTimeout(() => {
          f.violation(`${c.name} (pid ${c.proc.pid}) did not stop within ${graceMs} ms of SIGTERM; killed`);
          c.proc.kill('SIGKILL');
        }, graceMs);
        await c.exited;
        clearTimeout(timer);
      }),
    );
    for (const c of this.children)
      if (pidAlive(c.proc.pid!)) f.violation(`${c.name} (pid ${c.proc.pid}) is still alive after the drill`);
    live.delete(this);
  }

  /** SIGKILL to every child still running, at once (the runner was interrupted). */
  killNow(): void {
    for (const c of this.children) if (c.running) c.proc.kill('SIGKILL');
  }

  get pids(): number[] {
    return this.children.map((c) => c.proc.pid!).filter(Boolean);
  }
}

const live = new Set<Processes>();

/** Kills the children of every drill still running: for an interrupted runner, and any exit of this process. */
export function killDrillProcesses(): void {
  for (const p of live) p.killNow();
}
process.on('exit', killDrillProcesses);

/** Environment of an api or worker process on the stack's database and Temporal (overridable). */
export function processEnv(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const { config, ds, env } = getStack();
  return childEnv({
    DATABASE_URL: (ds.options as { url: string }).url,
    SECRETS_KEY: config.secretsKey!.toString('base64'),
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    DATA_DIR: config.dataDir,
    BLOB_DIR: config.blobDir,
    BUILD_DIR: config.buildDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: config.logLevel,
    SHUTDOWN_GRACE_MS: '2000',
    // As the stack's own worker: data connectors may fetch the tests' local sites.
    OUTBOUND_ALLOW: formatOutboundAllow(config.outbound),
    ...overrides,
  });
}

/** A real api process (`npm run api`, dist/src/api/main.js), ready once GET /ready answers 200. */
export async function startApiProcess(
  procs: Processes,
  name: string,
  overrides: Record<string, string | undefined> = {},
  /** Run it as this (non-root) user, with these capabilities as ambient ones. */
  as?: { user: string; capabilities: string[] },
  /** The Node binary that runs it (the bench's `--api-node`): this process's by default. */
  node = process.execPath,
  /** The build it runs (the upgrade drill's build B): this one's dist/ by default. */
  dist = DIST,
) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const [file, ...args] = asUser(as, [node, path.join(dist, 'src', 'api', 'main.js')]);
  const child = procs.spawn(
    name,
    file,
    args,
    // Errors are logged (kept in memory, not printed) so that a drill can say why a request failed.
    processEnv({ PORT: String(port), PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'error', ...overrides }),
  );
  await until(
    `${name} to answer /ready`,
    60_000,
    async () => {
      if (!child.running) throw new Error(`${name} exited before it was ready:\n${child.tail()}`);
      const res = await fetch(`${baseUrl}/ready`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    },
    50,
  );
  /** What the api logged about a request that failed with a 5xx (its body names the request id). */
  const whyFailed = (body: string) => {
    const requestId = body.match(/request id ([0-9a-f-]{36})/)?.[1];
    const line = requestId ? child.find(requestId) : undefined;
    if (!line) return '';
    try {
      const { err } = JSON.parse(line) as { err?: { type?: string; message?: string; stack?: string } };
      return ` (${err?.type}: ${err?.message}; ${err?.stack
        ?.split('\n')
        .slice(1, 4)
        .map((l) => l.trim())
        .join(' ')})`;
    } catch {
      return ` (${line.slice(0, 300)})`;
    }
  };
  return { child, baseUrl, whyFailed };
}

/** `command` run as `as.user` (setpriv), with `as.capabilities` as ambient ones (none: an ordinary user). */
function asUser(as: { user: string; capabilities: string[] } | undefined, command: string[]): string[] {
  if (!as) return command;
  const caps = as.capabilities.map((c) => `+${c}`).join(',');
  return [
    'setpriv',
    `--reuid=${as.user}`,
    `--regid=${as.user}`,
    '--init-groups',
    ...(caps ? [`--inh-caps=${caps}`, `--ambient-caps=${caps}`] : []),
    '--',
    ...command,
  ];
}

let bundleFile: string | undefined;

/**
 * A real worker (workflows and activities, see worker-process.ts) in a process of its own on `taskQueue`,
 * ready once it polls. It loads the stack's prebuilt workflow bundle, so it starts in about a second.
 */
export async function startWorkerProcess(
  procs: Processes,
  name: string,
  overrides: Record<string, string | undefined>,
  /** Run it as this (non-root) user, with these capabilities as ambient ones (docs/security.md). */
  as?: { user: string; capabilities: string[] },
  /** The Node binary that runs it (the bench's `--worker-node`): this process's by default. */
  node = process.execPath,
  /** Another build to run (the upgrade drill's build B): its dist/ and its workflow bundle; default, this one. */
  build?: { dist: string; bundle: string },
) {
  const { workflowBundle, config } = getStack();
  if (!bundleFile) {
    bundleFile = path.join(config.dataDir, 'drill-workflow-bundle.js');
    fs.writeFileSync(bundleFile, workflowBundle.code);
    fs.chmodSync(bundleFile, 0o644);
  }
  // An ordinary user may not reach the stack's data directory: it gets a copy in its own (DATA_DIR).
  let bundle = build?.bundle ?? bundleFile;
  if (!build && as && !as.capabilities.length && overrides.DATA_DIR) {
    bundle = path.join(overrides.DATA_DIR, 'drill-workflow-bundle.js');
    fs.copyFileSync(bundleFile, bundle);
    fs.chmodSync(bundle, 0o644);
  }
  const script = build
    ? path.join(build.dist, 'test', 'drills', 'worker-process.js')
    : path.join(__dirname, 'worker-process.js');
  const [file, ...args] = asUser(as, [node, script, bundle]);
  const child = procs.spawn(
    name,
    file,
    args,
    // User code's Node stays this process's, whatever runs the worker (as `npm start` does).
    processEnv({
      NODEJS_RUNTIME: process.env.NODEJS_RUNTIME ?? process.execPath,
      ...(as ? { SANDBOX_STATE_DIR: '/run/tarmac-sandbox' } : {}),
      ...overrides,
    }),
  );
  await procs.waitForLine(child, /^ready$/m);
  return child;
}

/** A Temporal dev server of the drill's own, restartable on the same SQLite file and port. */
export async function startTemporalDevServer(
  procs: Processes,
  opts: { dbFile: string; port: number; name?: string; extraArgs?: string[] },
): Promise<DrillChild> {
  const cli = temporalCli(getStack().config);
  if (cli.type !== 'existing-path')
    throw new Error('the Temporal CLI is not cached: run tools/obtain-temporal.sh --cli-only');
  const child = procs.spawn(
    opts.name ?? 'temporal',
    cli.path,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(opts.port),
      '--headless',
      '--db-filename',
      opts.dbFile,
      ...DEV_SERVER_SQLITE_ARGS,
      '--namespace',
      'default',
      '--log-level',
      'error',
      ...SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=Keyword`]),
      ...(opts.extraArgs ?? []),
    ],
    childEnv(),
  );
  await until(
    'the Temporal dev server to answer',
    60_000,
    async () => {
      if (!child.running) throw new Error(`the Temporal dev server exited:\n${child.tail()}`);
      try {
        const connection = await Connection.connect({ address: `127.0.0.1:${opts.port}`, connectTimeout: 1000 });
        try {
          await connection.workflowService.describeNamespace({ namespace: 'default' });
          return true;
        } finally {
          await connection.close();
        }
      } catch {
        return undefined;
      }
    },
    200,
  );
  return child;
}
