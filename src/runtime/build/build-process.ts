// One build step (git, python -m venv, pip, npm, a user's build script) as a subprocess: no shell, its own
// process group, a clean environment, output kept as a bounded tail. Cancellation (the deployment's time
// limit, or the worker shutting down) kills the whole group at once: a build has nothing to save. A step whose
// sandbox could not be set up (it never started: a host too busy to bring its network up) is started again.
import { SANDBOX_SETUP_PREFIX, SANDBOX_SETUP_RETRY_DELAYS_MS, sandboxSetupFailure } from '../sandbox/setup-failure';
import { spawnDetached, type ExitStatus, type Spawned } from '../process/spawn';
import type { Wrapped } from '../sandbox/sandbox';

/** The last `limit` bytes of everything the build steps printed, for status_detail.build_output_tail. */
export class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly limit = 4096,
    /** Strings never to keep (an access token that a tool might echo). */
    private readonly redact: string[] = [],
  ) {}

  append(data: Buffer | string): void {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0].length >= this.limit)
      this.size -= this.chunks.shift()!.length;
  }

  text(): string {
    let text = Buffer.concat(this.chunks).subarray(-this.limit).toString('utf8');
    for (const secret of this.redact) if (secret) text = text.split(secret).join('***');
    // A cut through a multi-byte character leaves a replacement character at the start: drop it.
    return text.replace(/^\uFFFD+/, '');
  }
}

export interface StepOptions {
  file: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** The command as the sandbox runs it (Sandbox.wrap): every build step is user code. */
  isolate: (command: { file: string; argv: string[]; cwd: string }) => Wrapped;
  output: OutputTail;
  /** Rejects when the build must stop (activity cancellation); rethrown once the group is dead. */
  cancelled: Promise<never>;
}

/** How the step ended, with the resource limit that stopped it (if any). */
export type StepResult = ExitStatus;

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

/** After the step's main process exits, how long escaped background children may keep our pipes open. */
const DRAIN_MS = 2_000;

/** Runs one step to its end. Rejects with a plain Error when it cannot be started (an infrastructure fault). */
export async function runStep(opts: StepOptions): Promise<StepResult> {
  opts.output.append(`$ ${[opts.file, ...opts.argv].join(' ')}\n`);
  for (let tries = 1; ; tries++) {
    const { status, stderrTail } = await runOnce(opts);
    // The sandbox could not be set up (the step never started): the platform's fault, tried again.
    const delayMs = SANDBOX_SETUP_RETRY_DELAYS_MS[tries - 1];
    const setup = sandboxSetupFailure(status.code, stderrTail.trimEnd().split('\n').pop());
    if (!setup || delayMs === undefined) return status;
    opts.output.append(`${SANDBOX_SETUP_PREFIX}starting the step again in ${delayMs / 1000} s (try ${tries + 1})\n`);
    const waited = await Promise.race([
      new Promise<void>((r) => setTimeout(r, delayMs)),
      opts.cancelled.catch((err: unknown) => ({ cancelled: err })),
    ]);
    if (waited && 'cancelled' in waited) throw waited.cancelled;
  }
}

async function runOnce(opts: StepOptions): Promise<{ status: StepResult; stderrTail: string }> {
  const wrapped = opts.isolate({ file: opts.file, argv: opts.argv, cwd: opts.cwd });
  let child: Spawned;
  try {
    child = await spawnDetached({ ...wrapped, cwd: opts.cwd, env: opts.env });
  } catch (err) {
    throw new Error(`could not start ${opts.file}: ${(err as Error).message}`);
  }
  const pid = child.pid;
  let stderrTail = '';
  child.stderr.on('data', (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4096)));
  const drained = Promise.all(
    [child.stdout, child.stderr].map((stream) => {
      stream.on('data', (chunk: Buffer) => opts.output.append(chunk));
      return new Promise<void>((resolve) => stream.once('close', () => resolve()));
    }),
  );
  const exited: Promise<StepResult> = child.exited.then(wrapped.readExit);
  const first = await Promise.race([exited, opts.cancelled.catch((err: unknown) => ({ cancelled: err }))]);
  // Whatever the step left running in its group goes too (on cancellation: everything).
  killGroup(pid);
  const status = await exited;
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, DRAIN_MS).unref());
  await Promise.race([drained, timeout]);
  child.abandonOutput();
  if ('cancelled' in first) throw first.cancelled;
  return { status, stderrTail };
}

/** "exited with code 1" / "was killed by SIGKILL". */
export const describeExit = (r: StepResult) =>
  r.code !== null ? `exited with code ${r.code}` : `was killed by ${r.signal}`;
