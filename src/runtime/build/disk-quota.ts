// Disk quotas of a build: what it leaves in its own directory (BUILD_DISK_MB) and what it adds to its
// organization's package cache (BUILD_CACHE_MB). Measured while the build runs, every second, by `du` in a
// child process (a deep or huge tree costs the worker nothing, and a path longer than PATH_MAX is still
// counted); past a quota the build's `exceeded` promise rejects, which stops the running step like a
// cancellation (its process group is killed). Per-file size is capped separately (RLIMIT_FSIZE).
import { findTool } from '../process/confine';
import { spawnDetached } from '../process/spawn';
import { DeploymentFailure } from './failure';

const MB = 1024 * 1024;

/**
 * Runs one of the system's file tools (du, find, rm) as the worker, from the spawner, and answers its
 * stdout. GNU du, find and rm walk a tree with openat and no-follow, so a tree that user code is changing
 * at the same moment cannot lead them (or a deletion) outside it.
 */
export async function fileTool(name: 'du' | 'find' | 'rm', argv: string[]): Promise<string> {
  const child = await spawnDetached({
    file: findTool(name) ?? name,
    argv,
    cwd: '/',
    env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
  });
  child.stderr.resume(); // files vanishing during a walk: the tool carries on
  let out = '';
  for await (const chunk of child.stdout) out += String(chunk);
  await child.exited;
  return out;
}

/**
 * Bytes on disk under `dir` (blocks in use: sparse files count what they occupy, hard links once, no link
 * followed, one filesystem); 0 when it does not exist.
 */
export async function diskUsage(dir: string): Promise<number> {
  const bytes = Number(/^(\d+)/.exec(await fileTool('du', ['-s', '-x', '-B1', '--', dir]))?.[1]);
  return Number.isFinite(bytes) ? bytes : 0;
}

export interface BuildQuota {
  diskBytes: number;
  cacheBytes: number;
}

const mb = (bytes: number) => Math.ceil(bytes / MB);

export class BuildQuotaWatch {
  /** Rejects (DeploymentFailure) once a quota is exceeded; never resolves. */
  readonly exceeded: Promise<never>;
  private reject!: (err: DeploymentFailure) => void;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly opts: { buildPath: string; cacheDir: string; quota: BuildQuota; intervalMs: number },
    private readonly cacheAtStart: number,
  ) {
    this.exceeded = new Promise<never>((_, reject) => (this.reject = reject));
    this.exceeded.catch(() => undefined); // awaited by whichever step runs; none may be running
  }

  /** Starts measuring `buildPath` and the growth of `cacheDir` every `intervalMs` until stop(). */
  static async start(opts: {
    buildPath: string;
    cacheDir: string;
    quota: BuildQuota;
    intervalMs?: number;
  }): Promise<BuildQuotaWatch> {
    const watch = new BuildQuotaWatch({ intervalMs: 1_000, ...opts }, await diskUsage(opts.cacheDir));
    watch.schedule();
    return watch;
  }

  /** Measures now; throws the DeploymentFailure that names the quota when one is exceeded. */
  async check(): Promise<void> {
    const { buildPath, cacheDir, quota } = this.opts;
    const [build, cache] = await Promise.all([diskUsage(buildPath), diskUsage(cacheDir)]);
    if (build > quota.diskBytes) {
      throw new DeploymentFailure(
        'DiskQuotaExceeded',
        `The build used ${mb(build)} MB of disk in its directory, more than its quota BUILD_DISK_MB=${mb(quota.diskBytes)}: ` +
          'the build was stopped. Make the build smaller (fewer or smaller dependencies), or ask the operator to raise BUILD_DISK_MB.',
      );
    }
    if (cache - this.cacheAtStart > quota.cacheBytes) {
      throw new DeploymentFailure(
        'CacheQuotaExceeded',
        `The build added ${mb(cache - this.cacheAtStart)} MB to its organization's package cache, more than its quota ` +
          `BUILD_CACHE_MB=${mb(quota.cacheBytes)}: the build was stopped. Write build files into the build directory, ` +
          'not the pip/npm cache, or ask the operator to raise BUILD_CACHE_MB.',
      );
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.check().then(
        () => this.schedule(),
        (err: unknown) => {
          if (err instanceof DeploymentFailure) {
            this.stopped = true;
            this.reject(err);
          } else {
            this.schedule(); // du could not run this time: measure again next time
          }
        },
      );
    }, this.opts.intervalMs);
    this.timer.unref();
  }
}
