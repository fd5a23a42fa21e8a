// The launcher: the process `npm start` leaves in the terminal. It re-runs the entry file as the
// supervisor in a process group of its own, so that a Ctrl-C reaches only the launcher, which forwards
// it (SIGHUP as SIGTERM) to the supervisor alone. The supervisor's stdin is a pipe from the launcher: if
// the launcher dies, the supervisor sees end of file and stops everything. The launcher exits with the
// supervisor's exit status (128 + the signal number if it was killed by a signal).
import { spawn } from 'node:child_process';
import os from 'node:os';

/** The argument that makes the entry file run as the supervisor. */
export const SUPERVISOR_FLAG = '--supervise';

/** Runs `entry` (the compiled start.js) again with SUPERVISOR_FLAG, and stays its link to the terminal. */
export function launch(entry: string): void {
  const supervisor = spawn(process.execPath, [...process.execArgv, entry, SUPERVISOR_FLAG], {
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
