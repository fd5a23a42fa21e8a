// The one path by which user code runs (builds, structure, function and tool runs). With SANDBOX=on each
// process tree runs:
//   sh       (enters the run's control group, cgroups.ts: memory of the whole run, processes, CPU weight)
//   setpriv  (a run uid of its own and its organization's gid, no supplementary groups, no capabilities,
//             no_new_privs, killed with the worker)
//   launcher (network.ts: the network helper, pasta, beside the sandbox, as the same uid; in the process that
//             becomes bwrap, its ulimits: CPU seconds, processes of its uid, file size, open files, no core dumps)
//   bwrap    (new user, pid, ipc, uts, cgroup and network namespaces: it sees only its own processes and
//             sockets; a read-only root of /usr and /etc; a read-only /dev with a sized /dev/shm; its build
//             read-only (read-write while building); a private
//             size-capped tmpfs for HOME and /tmp; the seccomp filter of seccomp.ts)
// behind the owner-matched firewall of firewall.ts. See docs/security.md for what each layer stops.
// A worker that is not root (isolation.ts: the rootless mode) runs the same chain without a uid of its own:
//   sh (a delegated cgroup v2 group, where the host offers one) → setpriv (no_new_privs, killed with the
//   worker) → launcher (maps the worker's uid to root of the run's user namespace, loads the run's packet
//   filter into its network namespace: namespace-firewall.ts; pasta) → bwrap (the same namespaces and
//   mounts) → prlimit inside it (so that RLIMIT_NPROC counts the run's namespace, not the worker's uid;
//   without a control group also RLIMIT_AS, memory per process).
// With SANDBOX=off (single-tenant development only) it runs as the worker's user, with prlimit alone.
// Beside this file: sandbox-types (its shapes), host (what it reads of the host: mounts, resolvers, reach),
// rootless (that mode's setup), probe (the proof run before the worker takes work).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SandboxConfig } from '../../config';
import type { Logger } from '../../logger';
import { confine, findTool } from '../process/confine';
import { type ExitStatus, sandboxExitStatus } from '../process/user-process';
import { Firewall } from './firewall';
import { helperProgram, loopbackPortsOf, RunNetwork, tunUsable } from './network';
import { pastaProgram, replaceableBy } from './pasta-program';
import { seccompProgram } from './seccomp';
import { UidPool } from './uid-pool';
import { CgroupTree, CgroupUnavailable, entryCommand, NO_RUN_GROUP, type RunGroup } from './cgroups';
import { limitHit, processLimits } from './limits';
import { watchOpenFiles } from './open-files';
import { effectiveCapabilities, hasCapability as has, isolationOnThisHost } from './isolation';

import { SandboxUnavailable, type SandboxIdentity, type SandboxSpec, type Wrapped } from './sandbox-types';
import { reachOf, resolvers, systemMounts } from './host';
import { rootlessSetupOf, type Rootless } from './rootless';
import { probeSandbox } from './probe';

export type { SandboxIdentity, SandboxSpec, Wrapped } from './sandbox-types';
export { SandboxUnavailable } from './sandbox-types';

const CAP_SETPCAP = 8;
const CAP_NET_ADMIN = 12;

export class Sandbox {
  private constructor(
    readonly config: SandboxConfig,
    private readonly tools: { bwrap: string; setpriv: string; prlimit: string; bash: string; sh: string } | undefined,
    private readonly uids: UidPool | undefined,
    private readonly firewall: Firewall | undefined,
    private readonly seccompFile: string | undefined,
    private readonly dropBoundingSet: boolean,
    private readonly cgroups: CgroupTree | undefined,
    private readonly network?: RunNetwork,
    private readonly rootless?: Rootless,
  ) {}

  get enabled(): boolean {
    return this.config.mode === 'on';
  }

  /** How user code is isolated (isolation.ts). */
  get mode(): 'root' | 'rootless' | 'off' {
    return !this.enabled ? 'off' : this.rootless ? 'rootless' : 'root';
  }

  /** What RUN_MEMORY_LIMIT_MB bounds: a run's control group (all its processes), else each process's address space. */
  get memoryScope(): 'run' | 'process' {
    return this.cgroups ? 'run' : 'process';
  }

  /**
   * Prepares isolation on this host (firewall rules, seccomp filter) and proves it with a sandboxed probe.
   * Throws SandboxUnavailable, naming what is missing and the SANDBOX setting, when SANDBOX=on cannot hold.
   */
  static async open(
    config: SandboxConfig,
    /** `reach`: URLs of the platform's choosing (the code host) whose host and port user code may reach. */
    opts: { log: Logger; apiBaseUrl: string; reach?: string[] },
  ): Promise<Sandbox> {
    const { log } = opts;
    if (config.mode === 'off') {
      log.warn('SANDBOX=off: user code runs as the worker user, unisolated; for single-tenant development only');
      return new Sandbox(config, undefined, undefined, undefined, undefined, false, undefined);
    }
    const refuse = (why: string) =>
      new SandboxUnavailable(
        `cannot isolate user code on this host: ${why}. The worker refuses to run user code without isolation; ` +
          'see docs/security.md for the setup, or set SANDBOX=off for single-tenant development only.',
      );
    const bwrap = findTool('bwrap');
    const setpriv = findTool('setpriv');
    const prlimit = findTool('prlimit');
    const pasta = pastaProgram(config);
    const replaceable = config.pasta && replaceableBy(config.pasta);
    if (replaceable) throw refuse(`SANDBOX_PASTA could be replaced by another user: ${replaceable}`);
    const bash = findTool('bash');
    const sh = findTool('sh');
    if (!bwrap) throw refuse('bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)');
    if (!setpriv || !prlimit || !sh) throw refuse('setpriv and prlimit (util-linux) or sh are not installed');
    if (!pasta || !bash)
      throw refuse('pasta, the network helper of each run, is not installed (Debian: apt-get install passt)');
    if (!tunUsable()) {
      throw refuse(
        '/dev/net/tun is not usable by run uids, which pasta needs inside each run (chmod 0666 /dev/net/tun, as udev does on most hosts; tools/obtain-sandbox.sh does it)',
      );
    }
    const caps = effectiveCapabilities();
    const root = process.geteuid?.() === 0;
    // Not root and without the capabilities to switch uids: the rootless mode, where the host allows it.
    const plan = isolationOnThisHost('on', pasta);
    if (plan.mode === 'none') throw refuse(plan.refused!);
    const rootless = plan.mode === 'rootless';
    let cgroups: CgroupTree | undefined;
    if (!rootless || plan.limits === 'cgroup') {
      try {
        cgroups = CgroupTree.open({ platformWeight: config.platformCpuWeight });
      } catch (err) {
        if (!(err instanceof CgroupUnavailable)) throw err;
        if (!rootless) throw refuse(`no control group for each run (memory, processes, CPU weight): ${err.message}`);
        log.warn({ err: err.message }, 'the delegated cgroup v2 is not usable: limits per process only');
      }
    }
    fs.mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
    fs.chmodSync(config.stateDir, 0o700);
    // Rootless, the leased uids only name runs (their control groups): every run is the worker's uid on the host.
    const uids = new UidPool(config.stateDir, config.uidBase, config.uidCount, (uid, pids) =>
      log.error({ uid, pids }, 'processes of a run uid outside its control group after the group was removed: killed'),
    );
    const reclaimed = await uids.reclaimGone();
    if (reclaimed) log.info({ reclaimed }, 'freed the run uids of workers that are gone');
    // Groups left by a worker that died (their uid no longer leased) go, with whatever still runs in them.
    const swept = cgroups ? await cgroups.sweep((uid) => uids.isLeased(uid)) : 0;
    if (swept) log.info({ swept }, 'removed the control groups of runs whose worker is gone');

    const program = seccompProgram();
    let seccompFile: string | undefined;
    if (program) {
      // Named by its content: workers of another version on this host (the state directory is host-wide)
      // keep their own filter instead of replacing this one's.
      const digest = createHash('sha256').update(program).digest('hex').slice(0, 16);
      seccompFile = path.join(config.stateDir, `seccomp-${digest}.bpf`);
      fs.writeFileSync(seccompFile, program, { mode: 0o600 });
    } else {
      log.warn({ arch: process.arch }, 'no seccomp filter for this architecture: user code runs without one');
    }

    const { api, allowHostPorts } = await reachOf(config, opts.apiBaseUrl, opts.reach ?? []);
    const helper = new RunNetwork(
      { pasta: helperProgram(pasta), setpriv },
      {
        loopbackPorts: loopbackPortsOf([
          ...api.addresses.map((address) => ({ address, port: api.port })),
          ...allowHostPorts,
        ]),
        resolvers: resolvers(),
      },
    );
    if (helper.loopbackResolvers.length) {
      log.warn(
        { resolvers: helper.loopbackResolvers },
        "runs cannot reach the host's DNS resolvers on loopback (their network is their own): name resolvers that are not on loopback in /etc/resolv.conf (with systemd-resolved, link /etc/resolv.conf to /run/systemd/resolve/resolv.conf)",
      );
    }

    const firewall = rootless ? undefined : Firewall.onThisHost();
    if (firewall && (root || has(caps, CAP_NET_ADMIN))) {
      try {
        await firewall.install({
          uidFirst: config.uidBase,
          uidLast: config.uidBase + config.uidCount - 1,
          api,
          resolvers: resolvers(),
          allowCidrs: config.allowCidrs,
          allowHostPorts,
        });
      } catch (err) {
        log.warn({ err }, 'could not install the sandbox firewall rules; relying on rules installed by the operator');
      }
    }
    const rootlessSetup = rootless
      ? await rootlessSetupOf(sh, { api, allowHostPorts, allowCidrs: config.allowCidrs }, !cgroups)
      : undefined;
    const sandbox = new Sandbox(
      config,
      { bwrap, setpriv, prlimit, bash, sh },
      uids,
      firewall,
      seccompFile,
      !rootless && (root || has(caps, CAP_SETPCAP)),
      cgroups,
      helper,
      rootlessSetup,
    );
    await probeSandbox(sandbox, { rootless, seccomp: Boolean(seccompFile) }).catch((err: Error) => {
      throw refuse(err.message);
    });
    log.info(
      {
        mode: plan.mode,
        uids: `${config.uidBase}+${config.uidCount}`,
        seccomp: Boolean(seccompFile),
        pasta,
        cgroups: cgroups ? { version: cgroups.version, roots: cgroups.roots } : 'none: limits per process',
        ...(plan.missing.length ? { missing: plan.missing } : {}),
      },
      rootless ? 'user code is sandboxed (rootless)' : 'user code is sandboxed',
    );
    return sandbox;
  }

  /** The same sandbox with other limits (tests); it leaves the firewall rules to this one. */
  withConfig(config: SandboxConfig): Sandbox {
    return new Sandbox(
      config,
      this.tools,
      this.uids,
      undefined,
      this.seccompFile,
      this.dropBoundingSet,
      this.cgroups,
      this.network,
      this.rootless,
    );
  }

  /**
   * Leases a run uid in `gid` (an organization's group) and creates its control group, whose memory limit
   * (`memoryBytes`) counts every process of the run and its tmpfs mounts. SANDBOX=off: undefined.
   * Throws CgroupUnavailable when the group cannot be made: the run must not start.
   */
  async identity(gid: number, memoryBytes: number): Promise<SandboxIdentity | undefined> {
    if (!this.uids) return undefined;
    const lease = await this.uids.lease();
    let group: RunGroup;
    try {
      // Its open files across its processes are watched (open-files.ts): no kernel limit counts them per group.
      group = this.cgroups
        ? watchOpenFiles(
            await this.cgroups.createRun(gid, lease.uid, { memoryBytes, maxProcesses: this.config.maxProcesses }),
            this.config.maxRunOpenFiles,
          )
        : NO_RUN_GROUP;
    } catch (err) {
      await lease.release();
      throw err;
    }
    let released: Promise<void> | undefined;
    // Every process of the uid starts in the group (entryCommand) and cannot leave it (the tree is root's):
    // once the group is gone, /proc is read only to confirm it, batched with other runs' when no one waits.
    const release = async (batched: boolean) => {
      let emptied = false;
      try {
        await group.destroy();
        emptied = group !== NO_RUN_GROUP;
      } finally {
        await lease.release({ groupEmptied: emptied && batched });
      }
    };
    return { uid: lease.uid, gid, group, release: (opts) => (released ??= release(Boolean(opts?.batched))) };
  }

  /** The gid of an organization, from its index (organizations.sandbox_index). */
  gidOf(sandboxIndex: number): number {
    return this.config.gidBase + sandboxIndex;
  }

  /** The command that runs `spec` isolated (SANDBOX=off: with the memory limit only). */
  wrap(spec: SandboxSpec): Wrapped {
    if (!this.enabled) {
      const { file, argv } = confine({ file: spec.file, argv: spec.argv }, spec.memoryBytes);
      return { file, argv, extraFiles: [], readExit: (status) => status };
    }
    const id = spec.identity;
    if (!id || !this.tools || !this.network) throw new Error('a sandboxed process needs a run identity');
    const c = this.config;
    const extraFiles: string[] = [];
    const entry = entryCommand(id.group, this.tools.sh);
    const countersBefore = id.group.counters();
    const rootless = this.rootless;
    const bwrap = [
      '--unshare-user',
      // Rootless: the worker's uid is mapped to root of the run's namespace (the only id it may map); without
      // capabilities (--cap-drop ALL, an empty bounding set) that root can do nothing a user could not.
      ...(rootless ? ['--uid', '0', '--gid', '0'] : []),
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      // No --disable-userns: it cannot go with the network launcher's --userns-block-fd (network.ts). New user
      // namespaces stay refused by the seccomp filter (unshare, setns, clone with CLONE_NEWUSER, clone3).
      '--hostname',
      'sandbox',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      ...systemMounts(),
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      // A sized /dev/shm (its pages count in the run's memory), then the rest of /dev read-only.
      '--size',
      String(c.shmBytes),
      '--perms',
      '1777',
      '--tmpfs',
      '/dev/shm',
      '--remount-ro',
      '/dev',
      '--size',
      String(c.diskBytes),
      '--tmpfs',
      '/tmp',
    ];
    // Mount order matters: HOME's tmpfs goes over the directories bound around it (a build's HOME is inside
    // the build), and the files bound into HOME (a run's inputs) go over the tmpfs.
    const inHome = (p: string) => p.startsWith(`${spec.home}/`);
    const binds = (inside: boolean) => {
      for (const p of spec.readOnly ?? []) if (inHome(p) === inside) bwrap.push('--ro-bind', p, p);
      for (const p of spec.writable ?? []) if (inHome(p) === inside) bwrap.push('--bind', p, p);
    };
    binds(false);
    bwrap.push('--size', String(c.diskBytes), '--tmpfs', spec.home);
    binds(true);
    bwrap.push('--remount-ro', '/', '--chdir', spec.cwd);
    if (this.seccompFile) {
      extraFiles.push(this.seccompFile);
      bwrap.push('--seccomp', '3');
    }
    // The program's environment, and nothing else's: --clearenv and --setenv pairs on the pipe after the
    // extra files (env-channel.ts), never the variables the steps before bubblewrap were started with.
    const envArgsFd = 3 + extraFiles.length;
    bwrap.push('--args', String(envArgsFd));
    // A network namespace of its own, connected by the launcher's helper (network.ts).
    bwrap.push(...this.network.bwrapArgs());
    // Memory is the control group's (the whole run); the limits of each process (limits.ts) are set after the
    // launcher, so that they bind the user's processes and not the helper.
    // bwrap sets PWD whatever it is told: env -u keeps the environment exactly what the platform built (the
    // variables of a run are a documented set, docs/code-runs.md).
    const program = ['/usr/bin/env', '-u', 'PWD', spec.file, ...spec.argv];
    const limits = processLimits(
      c,
      rootless ? { perProcessMemory: rootless.perProcess ? spec.memoryBytes : undefined } : undefined,
    );
    // Rootless: prlimit inside bubblewrap (processLimits says why). As root: the launcher's ulimits.
    const limited = rootless
      ? [this.tools.bwrap, ...bwrap, '--', this.tools.prlimit, ...limits.prlimit, '--', ...program]
      : [this.tools.bwrap, ...bwrap, '--', ...program];
    // The chain, each step exec'ing the next: enter the cgroup (as the worker) → setpriv → the network
    // launcher (as the run's uid; its ulimits) → bwrap.
    const argv = rootless
      ? [
          ...entry.prefix,
          this.tools.setpriv,
          '--no-new-privs',
          '--pdeathsig',
          'KILL',
          '--',
          this.tools.bash,
          ...this.network.launch(rootless.uid, rootless.gid, limited, {
            inside: { uid: 0, gid: 0 },
            setup: rootless.firewall,
          }),
        ]
      : [
          ...entry.prefix,
          this.tools.setpriv,
          `--reuid=${id.uid}`,
          `--regid=${id.gid}`,
          '--clear-groups',
          '--inh-caps=-all',
          ...(this.dropBoundingSet ? ['--bounding-set=-all'] : []),
          '--no-new-privs',
          '--pdeathsig',
          'KILL',
          '--',
          this.tools.bash,
          ...this.network.launch(id.uid, id.gid, limited, { limits: limits.ulimit }),
        ];
    const settings = { ...c, memoryBytes: spec.memoryBytes };
    return {
      file: entry.file,
      argv,
      extraFiles,
      envArgsFd,
      readExit: (status) => {
        const read = sandboxExitStatus(status);
        const limit = limitHit(read, { before: countersBefore, after: id.group.counters() }, settings);
        return limit ? { ...read, limit } : read;
      },
    };
  }

  /**
   * Gives a tree to `identity` (a build in progress writes into it) or, without one, back to the platform:
   * root-owned, readable by the organization's gid only (directories 0750, files 0640 or 0750).
   * Symlinks are never followed.
   */
  async chownTree(dir: string, owner: { uid: number; gid: number } | { platformFor: number }): Promise<void> {
    // Rootless, every build is the worker's on the host: a run sees only its own, read-only (bubblewrap's mounts).
    if (!this.enabled || this.rootless) return;
    const platform = 'platformFor' in owner;
    const uid = platform ? (process.geteuid?.() ?? 0) : owner.uid;
    const gid = platform ? owner.platformFor : owner.gid;
    const walk = async (p: string): Promise<void> => {
      const st = await fs.promises.lstat(p);
      await fs.promises.lchown(p, uid, gid);
      if (st.isSymbolicLink()) return;
      if (st.isDirectory()) {
        await fs.promises.chmod(p, platform ? 0o750 : 0o770);
        for (const entry of await fs.promises.readdir(p)) await walk(path.join(p, entry));
      } else if (platform) {
        await fs.promises.chmod(p, st.mode & 0o111 ? 0o750 : 0o640);
      }
    };
    await walk(dir);
  }

  /** Frees the uids of the runs that ended (their batched check done now), removes this worker's firewall rules (on shutdown). */
  async close(): Promise<void> {
    await this.uids?.flush();
    await this.firewall?.uninstall();
  }

  /**
   * Runs a probe in the sandbox: it must run as its run uid, under seccomp, in a network namespace of its
   * own (the host's listening socket absent from its /proc/net/tcp), and reach neither that socket on
   * loopback nor on the host's own address (the helper's traffic meets the firewall).
   */
}
