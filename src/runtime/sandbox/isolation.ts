// Which isolation of user code this host allows, decided before anything is built or downloaded (`npm start`
// says it first) and again by the worker itself (Sandbox.open), by the same rules:
//
//   root      the worker is root (or has the capabilities of docs/security.md): a host uid per run, the
//             owner-matched host firewall, a control group per run (the mode of docs/security.md)
//   rootless  the worker is an ordinary user and the host lets it make user namespaces: each run in its own
//             user, mount, pid, ipc and network namespace, all of them the worker's uid on the host; a packet
//             filter inside each run's own network namespace; limits by a delegated cgroup v2 where the host
//             offers one, else per process (prlimit)
//   off       SANDBOX=off: single-tenant development, user code unisolated
//
// `none` is SANDBOX=on on a host that allows neither: the worker refuses to run user code, and says why.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findTool } from '../process/confine';
import { tunUsable } from './network';

export type IsolationMode = 'root' | 'rootless' | 'off' | 'none';

export interface IsolationPlan {
  mode: IsolationMode;
  /** How a run's memory and processes are bounded: a control group per run, or limits per process. */
  limits?: 'cgroup' | 'per-process';
  /** mode `none`: why no isolation holds, and what to do. */
  refused?: string;
  /** What each piece this host lacks would add (shown at start, logged by the worker). */
  missing: string[];
}

const CAP_CHOWN = 0;
const CAP_KILL = 5;
const CAP_SETGID = 6;
const CAP_SETUID = 7;

export function effectiveCapabilities(): bigint {
  const m = /^CapEff:\s+([0-9a-f]+)/m.exec(fs.readFileSync('/proc/self/status', 'latin1'));
  return m ? BigInt(`0x${m[1]}`) : 0n;
}
export const hasCapability = (caps: bigint, cap: number) => (caps & (1n << BigInt(cap))) !== 0n;

/** Root, or the capabilities that switch user code to run uids (docs/security.md: a worker that is not root). */
export function canSwitchUids(): boolean {
  if (process.geteuid?.() === 0) return true;
  const caps = effectiveCapabilities();
  return [CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_KILL].every((c) => hasCapability(caps, c));
}

/** The tools the rootless mode runs, by name (Debian package in the message when one is missing). */
export function rootlessTools(pasta = findTool('pasta')) {
  return {
    bwrap: findTool('bwrap'),
    pasta,
    nsenter: findTool('nsenter'),
    iptablesRestore: findTool('iptables-restore'),
    ip6tablesRestore: findTool('ip6tables-restore'),
    setpriv: findTool('setpriv'),
    prlimit: findTool('prlimit'),
    bash: findTool('bash'),
    sh: findTool('sh'),
  };
}

const USERNS_ADVICE =
  'allow unprivileged user namespaces (sysctl user.max_user_namespaces=15000; Debian before 11: ' +
  'kernel.unprivileged_userns_clone=1; Ubuntu 24.04: kernel.apparmor_restrict_unprivileged_userns=0), run as root, ' +
  'or set SANDBOX=off for single-tenant development only';

/** Whether bubblewrap may make a user, pid and network namespace as this (unprivileged) user: the real thing. */
function userNamespacesAllowed(bwrap: string): string | undefined {
  const probe = spawnSync(
    bwrap,
    ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-net', '--ro-bind', '/', '/', '--', '/bin/true'],
    { encoding: 'utf8', timeout: 10_000, env: { PATH: '/usr/bin:/bin' } },
  );
  if (probe.status === 0) return undefined;
  return (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim().split('\n')[0];
}

/**
 * A cgroup v2 group of this process that it may hand to its children (systemd's Delegate=yes on a user
 * session or unit): the cpu, memory and pids controllers available, the directory writable. Read only.
 */
export function delegatedCgroupV2(): string | undefined {
  try {
    const own = /^0::(.*)$/m.exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
    const mount = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' - '))
      .find(([, right]) => right?.startsWith('cgroup2 '))?.[0]
      .split(' ');
    if (own === undefined || !mount) return undefined;
    const root = mount[3];
    const dir = path.join(mount[4], root !== '/' && own.startsWith(root) ? own.slice(root.length) : own);
    const controllers = fs.readFileSync(path.join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/);
    if (!['cpu', 'memory', 'pids'].every((c) => controllers.includes(c))) return undefined;
    fs.accessSync(dir, fs.constants.W_OK);
    fs.accessSync(path.join(dir, 'cgroup.subtree_control'), fs.constants.W_OK);
    return dir;
  } catch {
    return undefined;
  }
}

/** What a delegated cgroup v2 adds to the rootless mode (said at start and in docs/security.md). */
export const CGROUP_ADDS =
  "a delegated cgroup v2 (e.g. systemd-run --user -p Delegate=yes, or Delegate=yes on the worker's unit) would bound " +
  'the memory of a whole run (all its processes and its tmpfs pages; now RUN_MEMORY_LIMIT_MB of address space per ' +
  'process), count its processes in one group and kill it as one, and give each organization an equal CPU weight ' +
  '(now none: a busy run competes with everything of the worker user)';

/** What root (or the capabilities of docs/security.md) adds over the rootless mode. */
export const ROOT_ADDS =
  'root (or the capabilities of docs/security.md) would give each run a host uid of its own and its organization ' +
  "a group, instead of every organization's code being the worker's uid on the host (one shared identity if a " +
  "run ever left its namespaces, and the network helper pasta runs as the worker's uid rather than the run's), and " +
  'the control groups of cgroup v1 hosts';

/** The isolation this host allows for SANDBOX=`mode` (the worker checks it again and proves it with a probe). */
export function isolationOnThisHost(mode: 'on' | 'off', pasta?: string): IsolationPlan {
  if (mode === 'off') return { mode: 'off', missing: [] };
  if (canSwitchUids()) return { mode: 'root', limits: 'cgroup', missing: [] };
  const tools = rootlessTools(pasta);
  const lacking = [
    ['bwrap', 'bubblewrap'],
    ['pasta', 'passt'],
    ['nsenter', 'util-linux'],
    ['setpriv', 'util-linux'],
    ['prlimit', 'util-linux'],
    ['iptablesRestore', 'iptables'],
    ['ip6tablesRestore', 'iptables'],
    ['bash', 'bash'],
    ['sh', 'dash'],
  ].filter(([tool]) => !tools[tool as keyof typeof tools]);
  if (lacking.length) {
    const packages = [...new Set(lacking.map(([, p]) => p))].join(' ');
    return {
      mode: 'none',
      refused: `the worker is not root and the rootless sandbox lacks tools: install ${packages} (Debian: apt-get install ${packages}), or set SANDBOX=off for single-tenant development only`,
      missing: [],
    };
  }
  const userns = userNamespacesAllowed(tools.bwrap!);
  if (userns) {
    return {
      mode: 'none',
      refused: `the worker is not root and this host refuses it user namespaces (bubblewrap: ${userns}): ${USERNS_ADVICE}`,
      missing: [],
    };
  }
  if (!tunUsable()) {
    return {
      mode: 'none',
      refused:
        "the worker is not root and /dev/net/tun is not usable by it, which pasta needs in each run's network namespace (as root: chmod 0666 /dev/net/tun, as udev does on most hosts)",
      missing: [],
    };
  }
  const cgroup = delegatedCgroupV2() !== undefined;
  return {
    mode: 'rootless',
    limits: cgroup ? 'cgroup' : 'per-process',
    missing: [ROOT_ADDS, ...(cgroup ? [] : [CGROUP_ADDS])],
  };
}

/** One line for the banner and the worker's log. */
export function describeIsolation(plan: IsolationPlan): string {
  switch (plan.mode) {
    case 'root':
      return 'sandboxed as root: a uid, control group and host firewall per run (docs/security.md)';
    case 'rootless':
      return (
        'sandboxed rootless: user namespaces per run, a firewall in each run network namespace, limits ' +
        (plan.limits === 'cgroup' ? 'by a delegated cgroup v2' : 'per process (prlimit), no control group') +
        ' (docs/security.md#rootless-mode)'
      );
    case 'off':
      return 'NOT isolated (SANDBOX=off): single-tenant development only';
    case 'none':
      return `cannot be isolated: ${plan.refused}`;
  }
}
