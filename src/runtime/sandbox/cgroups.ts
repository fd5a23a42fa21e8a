// A control group per run and per build: the memory of the whole run (every process, and the pages of its
// tmpfs mounts, which the kernel charges to the writer's group), its number of processes and its share of
// the CPU. The tree, under the group the worker itself was started in:
//   <base>/tarmac/platform            the platform's own processes (worker, api, PostgreSQL, Temporal), CPU
//                                     weight SANDBOX_PLATFORM_CPU_WEIGHT
//   <base>/tarmac/runs/org-<gid>/     one per organization, equal weight: 200 busy processes of one
//                                     organization get the share of one
//   <base>/tarmac/runs/org-<gid>/run-<uid>   one per run or build (its leased uid): memory.max, pids.max
// cgroup v2 where the host's unified hierarchy has the controllers, else the v1 controllers cpu, memory,
// pids and freezer (each its own hierarchy, the same relative path in each). A run enters its group before
// anything of it runs (the first step of its command, see entryCommand) and is killed by its group: no
// double fork or new session escapes.
import fs from 'node:fs';
import path from 'node:path';
import { SANDBOX_SETUP_EXIT_CODE, SANDBOX_SETUP_PREFIX } from './setup-failure';
import {
  attempt,
  attemptRun,
  CgroupUnavailable,
  counter,
  dirOf,
  exists,
  existsRunFile,
  freezeAndKill,
  groupGone,
  killAll,
  makeDir,
  makeRunDir,
  mounts,
  ownGroups,
  peak,
  pidsInRun,
  PLATFORM_SUFFIX,
  read,
  removeDir,
  removeIfUnused,
  write,
  writeRunFile,
  type Mount,
} from './cgroup-fs';

export { CgroupUnavailable } from './cgroup-fs';

/** Which limits a run's group hit, counted since `counters()` was read before. */
export interface LimitCounters {
  oomKills: number;
  processLimitHits: number;
  /** Counted by the group's open-files watch (open-files.ts), where it has one. */
  openFileLimitHits?: number;
}

export interface RunGroup {
  /** The group's cgroup.procs files, one per hierarchy: the processes it holds (a process enters through entryFiles). */
  readonly procsFiles: string[];
  /**
   * What entryCommand's shell writes `0` (itself) into: v2's cgroup.procs; v1's `tasks` files, which move the
   * writing thread alone: the shell has one thread, so the whole process moves, and a recent kernel (measured on
   * 6.18) then leaves out its global migration lock, whose first writer after an idle spell waits for an RCU
   * grace period (8-23 ms, the first step of a lone run's chain: bench/RESULTS.md, session 14 `spawn-chain`).
   * An older kernel takes the lock as for cgroup.procs.
   */
  readonly entryFiles: string[];
  counters(): LimitCounters;
  /** The most memory the run used at once, in bytes (undefined where the kernel does not tell). */
  peakMemoryBytes(): number | undefined;
  /** Kills every process of the group (no fork escapes: frozen first, or cgroup.kill), waits until none is left, removes it. */
  destroy(): Promise<void>;
}

export interface RunGroupLimits {
  memoryBytes: number;
  maxProcesses: number;
}

const V2_CONTROLLERS = ['cpu', 'memory', 'pids'];
const V1_CONTROLLERS = ['cpu', 'memory', 'pids', 'freezer'] as const;
type V1Controller = (typeof V1_CONTROLLERS)[number];
const DEFAULT_WEIGHT = 100;

export abstract class CgroupTree {
  abstract readonly version: 1 | 2;
  /** Where the tree is (one directory per hierarchy), for the logs and for the operator. */
  abstract readonly roots: string[];
  /** The groups of an organization's runs in the memory hierarchy, and the file of a group's peak usage. */
  abstract readonly memory: { organizationDir(gid: number): string; peakFile: string };

  /**
   * Finds the controllers on this host, creates the tree, moves this process (the worker) into the platform
   * group. Throws CgroupUnavailable naming what is missing.
   */
  static open(opts: { platformWeight: number }): CgroupTree {
    let all: Mount[];
    try {
      all = mounts();
    } catch (err) {
      throw new CgroupUnavailable(`cannot read /proc/self/mountinfo: ${(err as Error).message}`);
    }
    const own = ownGroups();
    const unified = all.find((m) => m.type === 'cgroup2');
    if (unified && own.has('')) {
      const base = dirOf(unified, own.get('')!);
      const available = exists(path.join(base, 'cgroup.controllers'))
        ? read(path.join(base, 'cgroup.controllers')).split(/\s+/)
        : [];
      if (V2_CONTROLLERS.every((c) => available.includes(c))) return new CgroupTreeV2(base, opts.platformWeight);
    }
    const dirs = {} as Record<V1Controller, string>;
    const missing: string[] = [];
    for (const controller of V1_CONTROLLERS) {
      const mount = all.find((m) => m.type === 'cgroup' && m.options.includes(controller));
      const group = own.get(controller);
      if (!mount || group === undefined) missing.push(controller);
      else dirs[controller] = dirOf(mount, group);
    }
    if (missing.length) {
      throw new CgroupUnavailable(
        'no cgroup v2 hierarchy with the cpu, memory and pids controllers, and the cgroup v1 controllers ' +
          `${missing.join(', ')} are not mounted (or this process is in none of their groups)`,
      );
    }
    return new CgroupTreeV1(dirs, opts.platformWeight);
  }

  /** Creates the group of one run or build (replacing a leftover of a lost worker of the same name). */
  abstract createRun(organizationGid: number, runUid: number, limits: RunGroupLimits): Promise<RunGroup>;

  /** Kills what is left in a run's group and removes it (and its organization's, once unused). */
  protected abstract destroyRun(organizationGid: number, runUid: number): Promise<void>;

  /** The directory of `runs/org-<gid>/run-<uid>` in one hierarchy (all have the same). */
  protected abstract get runsDir(): string;

  /**
   * Removes the run groups whose uid no worker holds (`isLeased`): left by a worker that died. A uid is
   * leased before its group is made and released after it is removed, so no live run's group is touched.
   * Answers how many were removed.
   */
  async sweep(isLeased: (uid: number) => boolean): Promise<number> {
    const list = (dir: string) => {
      try {
        return fs.readdirSync(dir);
      } catch {
        return [];
      }
    };
    let removed = 0;
    for (const org of list(this.runsDir)) {
      const gid = /^org-(\d+)$/.exec(org)?.[1];
      if (!gid) continue;
      for (const run of list(path.join(this.runsDir, org))) {
        const uid = /^run-(\d+)$/.exec(run)?.[1];
        if (!uid || isLeased(Number(uid))) continue;
        try {
          await this.destroyRun(Number(gid), Number(uid));
          removed++;
        } catch (err) {
          // Removed meanwhile by another worker sweeping the same tree.
          if (!groupGone(err)) throw err;
        }
      }
    }
    return removed;
  }
}

class CgroupTreeV2 extends CgroupTree {
  readonly version = 2 as const;
  readonly roots: string[];
  readonly memory = {
    organizationDir: (gid: number) => path.join(this.tarmac, 'runs', `org-${gid}`),
    peakFile: 'memory.peak',
  };
  private readonly tarmac: string;

  constructor(base: string, platformWeight: number) {
    super();
    this.tarmac = path.join(base, 'tarmac');
    this.roots = [this.tarmac];
    const platform = path.join(this.tarmac, 'platform');
    attempt(`cannot create the platform's control group ${platform}`, () => {
      makeDir(platform);
      write(path.join(platform, 'cgroup.procs'), process.pid);
    });
    // A group that passes controllers to its children may hold no process itself (v2's rule): the worker
    // has just left <base>; anything else left there makes this fail, and the operator must move it.
    const enable = (dir: string) =>
      attempt(
        `cannot enable the cpu, memory and pids controllers in ${dir} (a group that hands out controllers may ` +
          'hold no process: start the worker in a control group of its own, e.g. systemd Delegate=yes)',
        () => write(path.join(dir, 'cgroup.subtree_control'), V2_CONTROLLERS.map((c) => `+${c}`).join(' ')),
      );
    enable(base);
    enable(this.tarmac);
    attempt('cannot set the platform CPU weight', () => write(path.join(platform, 'cpu.weight'), platformWeight));
    makeDir(path.join(this.tarmac, 'runs'));
    enable(path.join(this.tarmac, 'runs'));
  }

  protected get runsDir() {
    return path.join(this.tarmac, 'runs');
  }

  protected async destroyRun(gid: number, uid: number): Promise<void> {
    const org = path.join(this.runsDir, `org-${gid}`);
    const dir = path.join(org, `run-${uid}`);
    if (await existsRunFile(dir)) await destroyV2(dir);
    await removeIfUnused(org);
  }

  async createRun(gid: number, uid: number, limits: RunGroupLimits): Promise<RunGroup> {
    const org = path.join(this.runsDir, `org-${gid}`);
    const dir = path.join(org, `run-${uid}`);
    if (await existsRunFile(dir)) await destroyV2(dir);
    await attemptRun(
      `cannot create the run's control group ${dir}`,
      async () => {
        await makeRunDir(org);
        if (!(await fs.promises.readFile(path.join(org, 'cgroup.subtree_control'), 'utf8')).includes('memory'))
          await writeRunFile(path.join(org, 'cgroup.subtree_control'), V2_CONTROLLERS.map((c) => `+${c}`).join(' '));
        await fs.promises.mkdir(dir);
        // The limits at once: each write is a trip through the thread pool, and none depends on another.
        await settledAll([
          writeRunFile(path.join(dir, 'memory.max'), limits.memoryBytes),
          existsRunFile(path.join(dir, 'memory.swap.max')).then((swap) =>
            swap ? writeRunFile(path.join(dir, 'memory.swap.max'), 0) : undefined,
          ),
          writeRunFile(path.join(dir, 'pids.max'), limits.maxProcesses),
          writeRunFile(path.join(dir, 'cpu.weight'), DEFAULT_WEIGHT),
        ]);
      },
      async () => {
        for (const d of [dir, org]) await removeIfUnused(d);
      },
    );
    return {
      procsFiles: [path.join(dir, 'cgroup.procs')],
      entryFiles: [path.join(dir, 'cgroup.procs')],
      counters: () => ({
        oomKills: counter(path.join(dir, 'memory.events'), 'oom_kill'),
        processLimitHits: counter(path.join(dir, 'pids.events'), 'max'),
      }),
      peakMemoryBytes: () => peak(path.join(dir, 'memory.peak')),
      destroy: () => this.destroyRun(gid, uid),
    };
  }
}

async function destroyV2(dir: string): Promise<void> {
  if (await existsRunFile(path.join(dir, 'cgroup.kill'))) await writeRunFile(path.join(dir, 'cgroup.kill'), 1);
  else await freezeAndKill(path.join(dir, 'cgroup.freeze'), '1', '0', () => pidsInRun(dir));
  await removeDir(dir);
}

class CgroupTreeV1 extends CgroupTree {
  readonly version = 1 as const;
  readonly roots: string[];
  readonly memory = {
    organizationDir: (gid: number) => path.join(this.tarmac.memory, 'runs', `org-${gid}`),
    peakFile: 'memory.max_usage_in_bytes',
  };
  private readonly tarmac: Record<V1Controller, string>;

  constructor(bases: Record<V1Controller, string>, platformWeight: number) {
    super();
    this.tarmac = Object.fromEntries(V1_CONTROLLERS.map((c) => [c, path.join(bases[c], 'tarmac')])) as Record<
      V1Controller,
      string
    >;
    this.roots = Object.values(this.tarmac);
    // Only the CPU share matters for the platform: its memory and processes stay where they were started.
    const platform = path.join(this.tarmac.cpu, 'platform');
    attempt(`cannot create the platform's control group ${platform}`, () => {
      makeDir(platform);
      write(path.join(platform, 'cpu.shares'), Math.round((platformWeight * 1024) / DEFAULT_WEIGHT));
      write(path.join(platform, 'cgroup.procs'), process.pid);
    });
    for (const c of V1_CONTROLLERS)
      attempt(`cannot create ${this.tarmac[c]}/runs`, () => makeDir(path.join(this.tarmac[c], 'runs')));
  }

  protected get runsDir() {
    return path.join(this.tarmac.pids, 'runs');
  }

  private runDir(controller: V1Controller, gid: number, uid: number): string {
    return path.join(this.tarmac[controller], 'runs', `org-${gid}`, `run-${uid}`);
  }

  protected async destroyRun(gid: number, uid: number): Promise<void> {
    const dir = (c: V1Controller) => this.runDir(c, gid, uid);
    const pids = async () => (await Promise.all(V1_CONTROLLERS.map((c) => pidsInRun(dir(c))))).flat();
    // An empty group (the run ended with its processes) has nothing that could fork meanwhile.
    if ((await existsRunFile(dir('freezer'))) && (await pids()).length)
      await freezeAndKill(path.join(dir('freezer'), 'freezer.state'), 'FROZEN', 'THAWED', pids);
    for (const c of V1_CONTROLLERS) {
      await removeDir(dir(c));
      await removeIfUnused(path.dirname(dir(c)));
    }
  }

  async createRun(gid: number, uid: number, limits: RunGroupLimits): Promise<RunGroup> {
    const relative = path.join('runs', `org-${gid}`, `run-${uid}`);
    const dir = (c: V1Controller) => this.runDir(c, gid, uid);
    const destroy = () => this.destroyRun(gid, uid);
    if ((await Promise.all(V1_CONTROLLERS.map((c) => existsRunFile(dir(c))))).some(Boolean)) await destroy();
    await attemptRun(
      `cannot create the run's control group ${relative} under ${this.roots.join(', ')}`,
      async () => {
        // Each hierarchy's group, and then each limit, at once: each step is a trip through the thread pool.
        await settledAll(V1_CONTROLLERS.map((c) => makeRunDir(dir(c))));
        const memsw = path.join(dir('memory'), 'memory.memsw.limit_in_bytes');
        await settledAll([
          (async () => {
            await writeRunFile(path.join(dir('memory'), 'memory.limit_in_bytes'), limits.memoryBytes);
            // No swap beyond it either (the file exists when the kernel accounts swap; never below the limit, so after it).
            if (await existsRunFile(memsw)) await writeRunFile(memsw, limits.memoryBytes);
          })(),
          writeRunFile(path.join(dir('pids'), 'pids.max'), limits.maxProcesses),
        ]);
      },
      async () => {
        for (const c of V1_CONTROLLERS) for (const d of [dir(c), path.dirname(dir(c))]) await removeIfUnused(d);
      },
    );
    const oomControl = path.join(dir('memory'), 'memory.oom_control');
    return {
      procsFiles: V1_CONTROLLERS.map((c) => path.join(dir(c), 'cgroup.procs')),
      entryFiles: V1_CONTROLLERS.map((c) => path.join(dir(c), 'tasks')),
      counters: () => ({
        // oom_kill (kernel 4.13+); before that, failcnt counts every time the limit was reached.
        oomKills:
          exists(oomControl) && !/^oom_kill /m.test(read(oomControl))
            ? counter(path.join(dir('memory'), 'memory.failcnt'), '')
            : counter(oomControl, 'oom_kill'),
        processLimitHits: counter(path.join(dir('pids'), 'pids.events'), 'max'),
      }),
      peakMemoryBytes: () => peak(path.join(dir('memory'), 'memory.max_usage_in_bytes')),
      destroy,
    };
  }
}

/** Waits for every one of `steps`, then throws the first failure (none is left running when the undo starts). */
async function settledAll(steps: Array<Promise<unknown>>): Promise<void> {
  const failed = (await Promise.allSettled(steps)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * The command that enters the group and then execs `file argv`: a shell writes itself (`0`) into each of the
 * group's entry files (it runs as the worker, before the privileges are dropped) and execs the rest, so the
 * pid stays the same and nothing of the command runs outside the group.
 */
export function entryCommand(group: RunGroup, shell: string): { file: string; prefix: string[] } {
  const script =
    `while [ "$1" != -- ]; do echo 0 > "$1" || { echo "${SANDBOX_SETUP_PREFIX}cannot enter the control group $1" >&2; ` +
    `exit ${SANDBOX_SETUP_EXIT_CODE}; }; ` +
    'shift; done; shift; exec "$@"';
  return { file: shell, prefix: ['-c', script, 'tarmac-cgroup-entry', ...group.entryFiles, '--'] };
}

/**
 * Moves this process into the platform's group, so that what it starts next (api, PostgreSQL, Temporal,
 * the worker) shares the platform's CPU weight. Best effort (answers why not): the worker's own sandbox
 * is what refuses to run user code without control groups.
 */
export function joinPlatformGroup(platformWeight: number): string | undefined {
  try {
    CgroupTree.open({ platformWeight });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The group `pid` is in, in each hierarchy (tests and drills: proof that a process is where it should be). */
export function groupsOf(pid: number): Map<string, string> {
  return ownGroups(pid);
}

/**
 * A run without a control group (the rootless mode on a host without a delegated cgroup v2): nothing to enter,
 * no counters, nothing to remove; its processes end with its pid namespace, and its limits are per process.
 */
export const NO_RUN_GROUP: RunGroup = {
  procsFiles: [],
  entryFiles: [],
  counters: () => ({ oomKills: 0, processLimitHits: 0 }),
  peakMemoryBytes: () => undefined,
  destroy: async () => undefined,
};
