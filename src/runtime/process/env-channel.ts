// The environment of a sandboxed program never passes through the steps that start it. Those steps run
// outside the sandbox: the control-group entry and setpriv as the worker (root), the network launcher (bash)
// and pasta as the run's uid on the host's file system. Given the tenant's variables they would obey them
// (LD_PRELOAD of a library in the tenant's build, BASH_ENV naming a script of it, ...). So the chain is
// spawned with a fixed environment, and the program's own reaches bubblewrap over a pipe as arguments
// (`--args <fd>`: `--clearenv`, then `--setenv NAME VALUE` for each), applied inside the sandbox only.
// Over a pipe rather than argv: values (secrets) never show in a process listing.
import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/** What the steps before bubblewrap get: nothing of the tenant's. */
export const CHAIN_ENV: Readonly<Record<string, string>> = { PATH: '/usr/bin:/bin' };

/** bubblewrap's NUL-separated arguments that give the program exactly `env`. */
export function envArgs(env: Record<string, string>): Buffer {
  const args = ['--clearenv'];
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
  return Buffer.from(`${args.join('\0')}\0`);
}

/** Writes `env` as bubblewrap's arguments into the child's pipe at `fd`, and closes it. */
export function sendEnv(child: ChildProcess, fd: number, env: Record<string, string>): void {
  const pipe = (child.stdio as unknown as Array<Writable | null>)[fd];
  if (!pipe) return;
  pipe.on('error', () => undefined); // a process that never reads it (it failed first) ends on its own
  pipe.end(envArgs(env));
}
