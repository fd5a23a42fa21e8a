// Isolation of user code (src/runtime/sandbox, docs/security.md): uids, limits per run, what runs may reach.
import path from 'node:path';
import { defaultRunOpenFiles, hostFileMax } from '../runtime/sandbox/open-files';
import type { HostPort } from '../security/outbound-policy';
import type { EnvReader } from './env';

const MiB = 1024 * 1024;

export interface SandboxConfig {
  /**
   * Where user processes and build steps are spawned from: `process`, a small child of the worker (a fork
   * of it is cheap), or `inline`, the worker itself (src/runtime/process/spawn.ts).
   */
  spawner: 'process' | 'inline';
  mode: 'on' | 'off';
  /** Run uids are taken from [uidBase, uidBase + uidCount); an organization's gid is gidBase + its index. */
  uidBase: number;
  uidCount: number;
  gidBase: number;
  /** Host-wide uid leases (lock files); shared by every worker on the host. */
  stateDir: string;
  /** Size of a run's private HOME and /tmp (each a tmpfs of this size). */
  diskBytes: number;
  /** CPU seconds per process (RLIMIT_CPU; past it SIGXCPU ends the run ERROR). */
  cpuSeconds: number;
  /** Processes and threads of one run (pids.max of its control group, and RLIMIT_NPROC of its uid). */
  maxProcesses: number;
  /** Open files per process of a run (RLIMIT_NOFILE). */
  maxOpenFiles: number;
  /**
   * Open files of one run across its processes (its group's open-files watch, src/runtime/sandbox/open-files.ts);
   * the default follows from the host: half of fs.file-max over WORKER_ACTIVITY_SLOTS.
   */
  maxRunOpenFiles: number;
  /** Size of a run's /dev/shm (a tmpfs counted in the run's memory). */
  shmBytes: number;
  /** CPU weight of the platform's own processes against all runs together (weight 100), cgroup v2 units. */
  platformCpuWeight: number;
  /** Largest file a user process may write (RLIMIT_FSIZE). */
  fileBytes: number;
  /** Extra destinations (CIDRs) user code may reach although they are private (an internal package index). */
  allowCidrs: string[];
  /**
   * Single services of the host (or of a private network) user code may reach, by host and port
   * (SANDBOX_ALLOW_HOST_PORTS, e.g. a model server at 127.0.0.1:11434); loopback ones are forwarded into
   * each run's network namespace (src/runtime/sandbox/network.ts).
   */
  allowHostPorts: HostPort[];
  /** The network helper's program (SANDBOX_PASTA); unset: tools/obtain-passt.sh's build, else the system's pasta. */
  pasta: string | undefined;
  /** The tools cache (TARMAC_CACHE_DIR), where tools/obtain-passt.sh builds pasta for a worker that is not root. */
  toolsCacheDir: string;
}

export interface SandboxSettings {
  /**
   * `on` runs every user process (builds, runs) as its own unprivileged uid in namespaces behind a firewall,
   * and the worker refuses to run user code where that is impossible; `off` (single-tenant development only)
   * runs it as the worker's user.
   */
  sandbox: SandboxConfig;
}

export function readSandbox(
  env: EnvReader,
  dataDir: string,
  cacheDir: string,
  workerActivitySlots: number,
): SandboxSettings {
  const root = process.getuid?.() === 0;
  const pasta = env.optional('SANDBOX_PASTA');
  if (pasta !== undefined && !path.isAbsolute(pasta)) env.problem(`SANDBOX_PASTA must be an absolute path: ${pasta}`);
  return {
    sandbox: {
      mode: env.oneOf('SANDBOX', 'on', ['on', 'off']),
      spawner: env.oneOf('SPAWNER', 'process', ['process', 'inline']),
      uidBase: env.int('SANDBOX_UID_BASE', 200_000, 1000, 2 ** 31 - 2),
      uidCount: env.int('SANDBOX_UID_COUNT', 10_000, 1, 1_000_000),
      gidBase: env.int('SANDBOX_GID_BASE', 300_000, 1000, 2 ** 31 - 2),
      stateDir: path.resolve(
        env.string('SANDBOX_STATE_DIR', root ? '/run/tarmac-sandbox' : path.join(dataDir, 'sandbox')),
      ),
      diskBytes: env.int('SANDBOX_DISK_MB', 512, 1, 1024 * 1024) * MiB,
      cpuSeconds: env.int('SANDBOX_CPU_SECONDS', 3600, 1),
      maxProcesses: env.int('SANDBOX_MAX_PROCESSES', 256, 8, 1_000_000),
      fileBytes: env.int('SANDBOX_FILE_MB', 1024, 1, 1024 * 1024) * MiB,
      maxOpenFiles: env.int('SANDBOX_MAX_OPEN_FILES', 4096, 64, 1_048_576),
      maxRunOpenFiles: env.int(
        'SANDBOX_MAX_RUN_OPEN_FILES',
        defaultRunOpenFiles(hostFileMax(), workerActivitySlots),
        64,
        1 << 30,
      ),
      shmBytes: env.int('SANDBOX_SHM_MB', 64, 1, 1024 * 1024) * MiB,
      platformCpuWeight: env.int('SANDBOX_PLATFORM_CPU_WEIGHT', 400, 1, 10_000),
      allowCidrs: env.cidrs('SANDBOX_ALLOW_CIDRS'),
      allowHostPorts: env.hostPorts('SANDBOX_ALLOW_HOST_PORTS'),
      pasta,
      toolsCacheDir: cacheDir,
    },
  };
}
