// A user process: spawned without a shell, in its own process group (and session), stdin from /dev/null
// (spawn.ts), stdout and stderr read line by line. Stopping it signals the whole group, so children die with it.
import os from 'node:os';
import { LineSplitter, StreamName } from './log-pump';
import type { ResultBytes } from './result-channel';
import { spawnDetached, type ExitStatus } from './spawn';

export type { ExitStatus };

export interface UserProcess {
  pid: number;
  /** Resolves when the process has exited and its output (and result) has been read, or abandoned (see below). */
  finished: Promise<ExitStatus>;
  /** What the process wrote to RESULT_FD (when asked for); settled by the time `finished` is. */
  result?: Promise<ResultBytes>;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs: number): Promise<void>;
}

/** After the main process exits, how long descendants that escaped the group may hold our pipes open. */
const OUTPUT_DRAIN_MS = 2_000;

/**
 * bubblewrap reports a child killed by signal N as exit code 128 + N (as shells do): read back as the signal
 * (Wrapped.readExit of sandboxed processes only), so a sandboxed run killed by SIGKILL or SIGXCPU says so.
 */
export function sandboxExitStatus(status: ExitStatus): ExitStatus {
  const { code } = status;
  if (code === null || code <= 128 || code > 128 + 64) return status;
  const name = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0] as
    NodeJS.Signals | undefined;
  return name ? { code: null, signal: name } : status;
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Spawns the process; rejects (nothing left running) when it cannot be started. */
export async function startUserProcess(opts: {
  file: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Opened read-only as fds 3, 4, ... of the child (the sandbox's seccomp filter). */
  extraFiles?: string[];
  /** Sandboxed: the fd its environment travels on to bubblewrap (Wrapped.envArgsFd). */
  envArgsFd?: number;
  /** How the process ended as its program sees it (Wrapped.readExit); as reported by default. */
  readExit?: (status: ExitStatus) => ExitStatus;
  /** A result pipe at RESULT_FD, read up to this many bytes. */
  result?: { limitBytes: number };
  onLine: (stream: StreamName, line: string) => void;
}): Promise<UserProcess> {
  const child = await spawnDetached(opts);
  const { pid } = child;

  const outputs = (['stdout', 'stderr'] as const).map((name) => {
    const stream = child[name];
    const splitter = new LineSplitter((line) => opts.onLine(name, line));
    stream.on('data', (chunk: Buffer) => splitter.push(chunk));
    return new Promise<void>((resolve) => {
      stream.once('close', () => {
        splitter.end();
        resolve();
      });
    });
  });

  const exited = child.exited.then(opts.readExit ?? ((s: ExitStatus) => s));

  const finished = exited.then(async (status) => {
    // Whatever the main process left behind in its group goes too (background children holding the pipes).
    signalGroup(pid, 'SIGKILL');
    const drained = Promise.all([...outputs, child.result]).then(() => true);
    const timedOut = new Promise<false>((r) => setTimeout(() => r(false), OUTPUT_DRAIN_MS).unref());
    if (!(await Promise.race([drained, timedOut]))) {
      child.abandonOutput();
      await drained;
    }
    return status;
  });

  const stop = async (graceMs: number) => {
    if (child.hasExited()) return;
    signalGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return { pid, finished, stop, result: child.result };
}
