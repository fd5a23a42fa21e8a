// The one way the worker starts a user process or a build step: detached (a new session and process group),
// stdin from /dev/null, stdout and stderr piped, `extraFiles` opened read-only as fds 3, 4, ...
//
// By default the spawn happens in a small long-lived child of the worker, the spawner (spawner-main.ts):
// Node forks to spawn, and a fork copies the page tables of the process that forks, so spawning from a
// worker of a few hundred MB costs tens of milliseconds (and blocks its event loop), from the spawner a
// fraction of one. The spawner forwards the output and the exit over its IPC channel; if the worker dies,
// the spawner kills every process group it started and exits (and a sandboxed process also dies with its
// parent, setpriv --pdeathsig). `SPAWNER=inline` spawns from the worker itself.
import { ChildProcess, fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { CHAIN_ENV, sendEnv } from './env-channel';
import { collectResult, type ResultBytes, resultStreamOf, stdioWith } from './result-channel';
import type { LimitHit } from '../sandbox/limits';
import type { SpawnerReply, SpawnerRequest } from './spawner-main';

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The resource limit that stopped it (sandboxed processes: Wrapped.readExit, src/runtime/sandbox/limits.ts). */
  limit?: LimitHit;
}

export interface SpawnRequest {
  file: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Opened read-only and given to the process as fds 3, 4, ... (the sandbox's seccomp filter). */
  extraFiles?: string[];
  /**
   * Sandboxed processes (Wrapped.envArgsFd): `env` goes to bubblewrap as arguments on a pipe at this fd (the
   * one after the extra files), and the process itself gets a fixed environment (env-channel.ts).
   */
  envArgsFd?: number;
  /** A pipe at RESULT_FD for the run's result, read up to `limitBytes` (result-channel.ts). */
  result?: { limitBytes: number };
}

export interface Spawned {
  pid: number;
  stdout: Readable;
  stderr: Readable;
  /** Resolves when the process has exited (its output may still be arriving). */
  exited: Promise<ExitStatus>;
  /** Whether `exited` has resolved. */
  hasExited(): boolean;
  /** Stops reading its output (descendants that escaped its group may hold the pipes open). */
  abandonOutput(): void;
  /** What arrived at RESULT_FD (when asked for), once every writer closed it, or at the limit. */
  result?: Promise<ResultBytes>;
}

export type SpawnMode = 'spawner' | 'inline';
let mode: SpawnMode = 'spawner';

/** Chosen once per worker from its configuration (`SPAWNER`). */
export function setSpawnMode(m: SpawnMode): void {
  mode = m;
}

/** Starts the process; rejects (nothing left running) when it cannot be started. */
export function spawnDetached(req: SpawnRequest): Promise<Spawned> {
  return mode === 'inline' ? spawnInline(req) : spawnerProcess().spawn(req);
}

async function spawnInline(req: SpawnRequest): Promise<Spawned> {
  const fds = (req.extraFiles ?? []).map((f) => fs.openSync(f, 'r'));
  let child: ChildProcess;
  try {
    child = spawn(req.file, req.argv, {
      cwd: req.cwd,
      env: req.envArgsFd === undefined ? req.env : { ...CHAIN_ENV },
      detached: true, // setsid(): a new process group whose id is the child's pid
      stdio: stdioWith(fds, Boolean(req.result), req.envArgsFd !== undefined),
      shell: false,
    });
  } finally {
    fds.forEach((fd) => fs.closeSync(fd));
  }
  if (req.envArgsFd !== undefined) sendEnv(child, req.envArgsFd, req.env);
  const resultStream = req.result ? resultStreamOf(child) : undefined;
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  child.on('error', () => undefined); // later errors (a failed kill) must not crash the worker
  let done = false;
  const exited = new Promise<ExitStatus>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  return {
    pid: child.pid!,
    stdout: child.stdout!,
    stderr: child.stderr!,
    exited,
    hasExited: () => done,
    abandonOutput: () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      resultStream?.destroy();
    },
    result: resultStream && collectResult(resultStream, req.result!.limitBytes),
  };
}

interface Pending {
  started: { resolve: (pid: number) => void; reject: (err: Error) => void } | undefined;
  pid?: number;
  stdout: PassThrough;
  stderr: PassThrough;
  exit: (status: ExitStatus) => void;
  done: boolean;
  /** Settles the result (when one was asked for); undefined once it has. */
  settleResult?: (r: ResultBytes) => void;
}

/** The worker's side of the spawner: requests by id, output into streams, exits into promises. */
class SpawnerClient {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  gone = false;

  constructor() {
    this.child = fork(path.join(__dirname, 'spawner-main.js'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced', // output chunks travel as bytes
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      execArgv: [],
    });
    // Neither keeps the worker alive: it exits when its own work is done, and the spawner follows it.
    this.child.unref();
    this.child.channel?.unref();
    this.child.on('message', (m: SpawnerReply) => this.receive(m));
    this.child.on('error', () => undefined);
    this.child.once('exit', () => this.lost());
  }

  async stop(): Promise<void> {
    if (this.gone) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await exited;
  }

  spawn(req: SpawnRequest): Promise<Spawned> {
    if (this.gone) return Promise.reject(new Error('the spawner process is gone'));
    const id = this.nextId++;
    let exit!: (s: ExitStatus) => void;
    const exited = new Promise<ExitStatus>((resolve) => (exit = resolve));
    const p: Pending = { started: undefined, stdout: new PassThrough(), stderr: new PassThrough(), exit, done: false };
    const started = new Promise<number>((resolve, reject) => (p.started = { resolve, reject }));
    const result = req.result ? new Promise<ResultBytes>((resolve) => (p.settleResult = resolve)) : undefined;
    this.pending.set(id, p);
    const { file, argv, cwd, env, envArgsFd } = req; // only these cross the channel
    this.send({
      type: 'spawn',
      id,
      file,
      argv,
      cwd,
      env,
      envArgsFd,
      extraFiles: req.extraFiles ?? [],
      result: req.result,
    });
    return started.then((pid) => ({
      pid,
      stdout: p.stdout,
      stderr: p.stderr,
      exited,
      hasExited: () => p.done,
      abandonOutput: () => {
        this.send({ type: 'abandon', id });
        this.forget(id, true);
      },
      result,
    }));
  }

  private send(m: SpawnerRequest) {
    if (!this.gone) this.child.send(m);
  }

  private receive(m: SpawnerReply) {
    const p = this.pending.get(m.id);
    if (!p) return;
    switch (m.type) {
      case 'spawned':
        p.pid = m.pid;
        this.child.ref(); // a process is running: the worker waits for it
        p.started?.resolve(m.pid);
        p.started = undefined;
        break;
      case 'failed':
        this.pending.delete(m.id);
        p.started?.reject(Object.assign(new Error(m.message), { code: m.code }));
        break;
      case 'data':
        (m.stream === 'stdout' ? p.stdout : p.stderr).write(Buffer.from(m.chunk));
        break;
      case 'end':
        (m.stream === 'stdout' ? p.stdout : p.stderr).end();
        this.forget(m.id);
        break;
      case 'exit':
        p.done = true;
        p.exit({ code: m.code, signal: m.signal as NodeJS.Signals | null });
        this.forget(m.id);
        break;
      case 'result':
        p.settleResult?.(m.tooLarge ? { tooLarge: true } : { bytes: Buffer.from(m.bytes ?? []) });
        p.settleResult = undefined;
        this.forget(m.id);
        break;
    }
  }

  /** Drops `id` once it exited and its output and result are in (or at once, `now`). */
  private forget(id: number, now = false) {
    const p = this.pending.get(id);
    if (!p) return;
    if (!now && !(p.done && p.stdout.writableEnded && p.stderr.writableEnded && !p.settleResult)) return;
    this.pending.delete(id);
    p.settleResult?.({ bytes: Buffer.alloc(0) });
    p.stdout.end();
    p.stderr.end();
    if (![...this.pending.values()].some((q) => q.pid !== undefined)) this.child.unref();
  }

  /** The spawner died: its processes are killed (their groups), and count as killed. */
  private lost() {
    this.gone = true;
    if (client === this) client = undefined;
    for (const [id, p] of this.pending) {
      if (p.pid !== undefined) killGroup(p.pid);
      p.started?.reject(new Error('the spawner process exited'));
      if (!p.done) {
        p.done = true;
        p.exit({ code: null, signal: 'SIGKILL' });
      }
      this.forget(id, true);
    }
  }
}

let client: SpawnerClient | undefined;

/**
 * Ends the spawner (it kills the process groups it started, then exits) and waits for it. A worker process
 * need not call it (its exit closes the channel); a process that goes on after its worker (the test stack, a
 * drill) does.
 */
export async function stopSpawner(): Promise<void> {
  const c = client;
  client = undefined;
  await c?.stop();
}

function spawnerProcess(): SpawnerClient {
  if (!client || client.gone) client = new SpawnerClient();
  return client;
}

function killGroup(pid: number) {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
