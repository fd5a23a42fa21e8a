// How a user process is confined, with util-linux tools where present:
// - memory: `prlimit --as=<bytes>` (address-space limit, inherited by children); without prlimit, a tiny
//   `sh -c 'ulimit -v <KiB> && exec "$0" "$@"'` wrapper does the same;
// - worker death: `setpriv --pdeathsig KILL` makes the kernel kill the process when the worker that spawned
//   it dies (a crash, SIGKILL, OOM), so a lost worker does not leave user code running unsupervised.
// Every wrapper execs the next one, so the pid we hold is the interpreter's and its exit status is its own.
import fs from 'node:fs';
import path from 'node:path';

/** Only fixed system directories are searched: the worker's own PATH is not trusted for this. */
const SYSTEM_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];

export function findTool(name: string): string | undefined {
  for (const dir of SYSTEM_DIRS) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

let tools: { prlimit?: string; setpriv?: string; sh?: string } | undefined;

export interface Confinement {
  /** How the memory limit is enforced on this host. */
  memoryLimit: 'prlimit' | 'ulimit' | 'none';
  /** Whether the process is killed by the kernel when the worker dies. */
  diesWithWorker: boolean;
}

export function confinementOnThisHost(): Confinement {
  tools ??= { prlimit: findTool('prlimit'), setpriv: findTool('setpriv'), sh: findTool('sh') };
  return {
    memoryLimit: tools.prlimit ? 'prlimit' : tools.sh ? 'ulimit' : 'none',
    diesWithWorker: tools.setpriv !== undefined,
  };
}

/** Wraps `file argv...` with the memory limit and parent-death signal available here. */
export function confine(
  command: { file: string; argv: string[] },
  memoryBytes: number,
): { file: string; argv: string[] } {
  const how = confinementOnThisHost();
  let { file, argv } = command;
  if (how.memoryLimit === 'prlimit') {
    argv = [`--as=${memoryBytes}`, '--', file, ...argv];
    file = tools!.prlimit!;
  } else if (how.memoryLimit === 'ulimit') {
    argv = ['-c', `ulimit -v ${Math.floor(memoryBytes / 1024)} && exec "$0" "$@"`, file, ...argv];
    file = tools!.sh!;
  }
  if (how.diesWithWorker) {
    argv = ['--pdeathsig', 'KILL', '--', file, ...argv];
    file = tools!.setpriv!;
  }
  return { file, argv };
}
