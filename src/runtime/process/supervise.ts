// Runs one user process to its end: starts it confined, pumps its output into run logs, heartbeats while
// it runs, and stops its whole process group on cancellation or when its output passes the log limit. A start
// whose sandbox could not be set up (before the program ran: a host too busy to bring its network up) is tried
// again, SANDBOX_SETUP_RETRY_DELAYS_MS apart, and said so in the run's logs; only the last try's failure is the
// run's (SandboxSetupFailed, the platform's reason, never the program's).
import type { Wrapped } from '../sandbox/sandbox';
import { SANDBOX_SETUP_PREFIX, SANDBOX_SETUP_RETRY_DELAYS_MS, sandboxSetupFailure } from '../sandbox/setup-failure';
import { LogPump, LostOutput, OutputLine } from './log-pump';
import type { ResultBytes } from './result-channel';
import { ExitStatus, startUserProcess, UserProcess } from './user-process';

export type SupervisedOutcome =
  /** `result`: what the process wrote to RESULT_FD, when a result was asked for. */
  /** `lastStderrLine`: the process's last line on stderr, where the sandbox's own steps say why they failed. */
  | { kind: 'exited'; status: ExitStatus; result?: ResultBytes; lastStderrLine?: string }
  | { kind: 'log-limit' }
  | { kind: 'start-failed'; message: string }
  /** `onStarted` said the run had already ended; the process was stopped at once. */
  | { kind: 'not-wanted' };

/** How the process ended, and the output that could not be stored (the database refused it past the grace). */
export type SupervisedResult = SupervisedOutcome & { lostOutput?: LostOutput };

export interface SuperviseOptions {
  command: { file: string; argv: string[]; cwd: string };
  env: Record<string, string>;
  /** The command as the sandbox runs it (Sandbox.wrap). */
  isolate: (command: { file: string; argv: string[]; cwd: string }) => Wrapped;
  logLimitBytes: number;
  /** The log pump's buffer of unsent lines, and how long it retries after the process ended (LogPump). */
  logBuffer: { lines: number; bytes: number; graceMs: number };
  /** Function and tool runs: a result pipe at RESULT_FD, read up to this many bytes. */
  resultLimitBytes?: number;
  killGraceMs: number;
  writeLogs: (lines: OutputLine[]) => Promise<void>;
  /** Called once the process runs; false means "stop it" (the run ended meanwhile). */
  onStarted: (pid: number) => Promise<boolean>;
  /**
   * Called every `heartbeatEveryMs` while the process runs; not at its start: each heartbeat is a write of the
   * workflow's state in Temporal (~7 ms of its CPU), and a process that ends within the first interval (a short
   * function) needs none. A cancellation is learned from a heartbeat's answer, so within the interval either way.
   */
  heartbeat: (pid: number) => void;
  heartbeatEveryMs: number;
  /** Rejects when the run must stop now (activity cancellation); the rejection is rethrown after the stop. */
  cancelled: Promise<never>;
  /** The first failed log write (the pump keeps retrying). */
  onLogWriteError?: (err: unknown) => void;
}

export async function superviseUserProcess(opts: SuperviseOptions): Promise<SupervisedResult> {
  let child: UserProcess | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= child ? child.stop(opts.killGraceMs) : Promise.resolve());
  const pump = new LogPump({
    write: opts.writeLogs,
    limitBytes: opts.logLimitBytes,
    onLimit: () => void stop(),
    bufferLines: opts.logBuffer.lines,
    bufferBytes: opts.logBuffer.bytes,
    onWriteError: opts.onLogWriteError,
  });
  const drain = () => pump.finish(opts.logBuffer.graceMs);
  const cancellation = opts.cancelled.catch((err: unknown) => ({ cancelled: err }));
  let wanted = false;
  for (let tries = 1; ; tries++) {
    const wrapped = opts.isolate(opts.command);
    let lastStderrLine: string | undefined;
    stopping = undefined;
    try {
      child = await startUserProcess({
        file: wrapped.file,
        argv: wrapped.argv,
        cwd: opts.command.cwd,
        env: opts.env,
        extraFiles: wrapped.extraFiles,
        envArgsFd: wrapped.envArgsFd,
        readExit: wrapped.readExit,
        ...(opts.resultLimitBytes !== undefined ? { result: { limitBytes: opts.resultLimitBytes } } : {}),
        onLine: (s, l) => {
          if (s === 'stderr') lastStderrLine = l;
          pump.add(s, l);
        },
      });
    } catch (err) {
      // A start again whose spawn fails: the earlier tries' lines are in the pump still.
      return {
        kind: 'start-failed',
        message: (err as Error).message,
        ...(tries > 1 ? { lostOutput: await drain() } : {}),
      };
    }
    const started = child;
    const beat = setInterval(() => opts.heartbeat(started.pid), opts.heartbeatEveryMs);
    try {
      // Asked once, at the first start: a start again after the sandbox's set-up failed is the same run.
      if (!wanted) {
        // A cancellation that arrives while RUNNING is being recorded still stops the process.
        wanted = await Promise.race([opts.onStarted(started.pid), opts.cancelled]).catch(async (err) => {
          await stop();
          throw err;
        });
        if (!wanted) {
          await stop();
          await started.finished;
          return { kind: 'not-wanted', lostOutput: await drain() };
        }
      }
      const first = await Promise.race([started.finished, cancellation]);
      if ('cancelled' in first) {
        await stop();
        await started.finished;
        await drain();
        throw first.cancelled;
      }
      // The sandbox could not be set up (its program never started): the platform's fault, tried again.
      const setup = sandboxSetupFailure(first.code, lastStderrLine);
      const delayMs = SANDBOX_SETUP_RETRY_DELAYS_MS[tries - 1];
      if (setup && delayMs !== undefined && !pump.limitExceeded) {
        pump.add('stderr', `${SANDBOX_SETUP_PREFIX}starting it again in ${delayMs / 1000} s (try ${tries + 1})`);
        const waited = await Promise.race([new Promise<void>((r) => setTimeout(r, delayMs)), cancellation]);
        if (waited && 'cancelled' in waited) {
          await drain();
          throw waited.cancelled;
        }
        continue;
      }
      const lostOutput = await drain();
      if (pump.limitExceeded) return { kind: 'log-limit', lostOutput };
      return {
        kind: 'exited',
        status: first,
        lostOutput,
        lastStderrLine,
        ...(started.result ? { result: await started.result } : {}),
      };
    } finally {
      clearInterval(beat);
    }
  }
}
