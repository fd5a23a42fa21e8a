// How the sandbox's own steps (the control group entry in cgroups.ts, the network launcher in network.ts) end
// when they cannot set a run up, before its program starts: this exit code and a last stderr line
// `tarmac: <why>`; bubblewrap's own (status 1, `bwrap: <why>`) likewise. A run that ends so is the platform's
// failure, not its program's (activities/code-runs.ts).
export const SANDBOX_SETUP_EXIT_CODE = 125;
/** A start whose sandbox could not be set up is tried again after each of these (a run's process, a build step). */
export const SANDBOX_SETUP_RETRY_DELAYS_MS = [2_000, 5_000];
export const SANDBOX_SETUP_PREFIX = 'tarmac: ';
const BWRAP_PREFIX = 'bwrap: ';

/** Why the sandbox could not be set up, when an exit says so; undefined for the program's own exits. */
export function sandboxSetupFailure(code: number | null, lastStderrLine: string | undefined): string | undefined {
  if (code === 1 && lastStderrLine?.startsWith(BWRAP_PREFIX)) return lastStderrLine;
  if (code !== SANDBOX_SETUP_EXIT_CODE || !lastStderrLine?.startsWith(SANDBOX_SETUP_PREFIX)) return undefined;
  return lastStderrLine.slice(SANDBOX_SETUP_PREFIX.length);
}
