// One process of the production shape (a Temporal server node, the UI server, the load balancer, the object
// store): spawned with its output appended to a log file in its own directory, watched for its exit, stopped
// with SIGTERM and then SIGKILL, or killed at once (what the drills do to a node). Readiness is the caller's check; a process that exits first fails it with
// the last lines of its log.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What SIGTERM is given before SIGKILL: the server drains its shards and leaves the ring within ~10 s. */
export const STOP_GRACE_MS = 20_000;

/** Every live child, sent SIGTERM when this process exits: one listener for a shape of a dozen processes. */
const LIVE = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of LIVE) child.kill('SIGTERM');
});

export class ClusterProcess {
  private readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  private exit: Exit | undefined;

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    readonly logFile: string,
    /** Its whole environment (default: this process's). */
    env?: NodeJS.ProcessEnv,
  ) {
    const out = fs.openSync(logFile, 'a');
    try {
      fs.writeSync(out, `\n==> ${new Date().toISOString()} ${name}: ${command} ${args.join(' ')}\n`);
      this.child = spawn(command, args, { stdio: ['ignore', out, out], ...(env ? { env } : {}) });
    } finally {
      fs.closeSync(out); // the child holds its own copy
    }
    this.exited = new Promise((resolve) => {
      this.child.once('error', (err) => {
        fs.appendFileSync(logFile, `${name}: could not run ${command}: ${err.message}\n`);
        resolve((this.exit ??= { code: null, signal: null }));
      });
      this.child.once('exit', (code, signal) => resolve((this.exit ??= { code, signal })));
    });
    // If this process exits without stopping it (a crash, process.exit), the child still goes.
    LIVE.add(this.child);
    void this.exited.then(() => LIVE.delete(this.child));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** Why it is not running, for an error message: how it exited and the last lines it logged. */
  describeExit(): string {
    const how = !this.exit
      ? 'still running'
      : this.exit.signal
        ? `killed by ${this.exit.signal}`
        : `exited with code ${this.exit.code}`;
    return `${this.name} ${how}; last lines of ${this.logFile}:\n${tail(this.logFile, 20)}`;
  }

  /** SIGKILL, no goodbye: its ring membership and shards are taken over when the others notice. */
  async kill(): Promise<Exit> {
    if (this.running) this.child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGTERM (the server leaves the ring and hands its shards over), SIGKILL if it is still there after `graceMs`. */
  async stop(graceMs = STOP_GRACE_MS): Promise<Exit> {
    if (!this.running) return this.exited;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

export function tail(file: string, lines: number): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Polls `ready` until it resolves true; fails when the process exits first or after `timeoutMs`. */
export async function waitUntilReady(
  proc: ClusterProcess,
  what: string,
  ready: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.running) throw new Error(`${what}: ${proc.describeExit()}`);
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`${what}: not ready within ${timeoutMs / 1000} s; ${proc.describeExit()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
