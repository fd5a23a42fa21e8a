// Deployment builds: where they live and for how long, their disk quotas, git sources, and what of this
// process's environment they inherit.
import path from 'node:path';
import type { EnvReader, JobLimits } from './env';

const MiB = 1024 * 1024;

export interface BuildSettings {
  /**
   * Immutable build directories of deployments, on each worker's own disk (or a volume they share); the same
   * path on every worker, since a build names its own absolute paths. Builds reach other workers through the
   * blob store (src/runtime/build/local-builds.ts).
   */
  buildDir: string;
  /** BUILD_LOCAL_CACHE_MB: bytes of builds a worker keeps in BUILD_DIR; least recently used idle ones go past it. */
  buildLocalCacheBytes: number;
  /** How long an unused build (superseded, failed, orphaned) stays before the build-cleanup schedule removes it. */
  buildRetentionSeconds: number;
  /**
   * Disk quotas of builds (docs/security.md): bytes one build may leave in its directory (source, venv,
   * node_modules), and bytes of an organization's pip/npm download cache (trimmed oldest first to it).
   */
  buildQuota: { diskBytes: number; cacheBytes: number };
  /** One deployment's build: its wall time (DEPLOYMENT_TIME_LIMIT_SECONDS, a workflow timer). */
  deploymentJob: JobLimits;
  /** Base URL of the code host for `codehost` code locations: `<base>/<owner>/<name>.git`. */
  codehostBaseUrl: string;
  /** git sources, cloned inside the sandbox: bytes on disk (GIT_MAX_MB) and wall time (GIT_TIME_LIMIT_SECONDS). */
  git: { maxBytes: number; timeSeconds: number };
  /**
   * What deployment builds (pip, npm, git, build scripts) inherit from this process's environment: proxy,
   * CA-bundle, PIP_* and NPM_CONFIG_* variables only, so builds work behind a proxy or a private index.
   */
  buildEnv: Record<string, string>;
  /**
   * The Node.js that runs `nodejs` structures and their npm (NODEJS_RUNTIME): by default the Node that runs
   * this worker. `npm start` runs its worker on a newer Node of its own and sets this to the system's, so that
   * user code keeps running on a Node the sandbox shows it (docs/configuration.md).
   */
  nodeRuntime: string;
}

export function readBuilds(env: EnvReader, dataDir: string): BuildSettings {
  return {
    buildDir: path.resolve(env.string('BUILD_DIR', path.join(dataDir, 'builds'))),
    buildLocalCacheBytes: env.int('BUILD_LOCAL_CACHE_MB', 20480, 0, 1024 * 1024 * 1024) * MiB,
    buildRetentionSeconds: env.int('BUILD_RETENTION_SECONDS', 3600, 0),
    buildQuota: {
      diskBytes: env.int('BUILD_DISK_MB', 4096, 1, 1024 * 1024) * MiB,
      cacheBytes: env.int('BUILD_CACHE_MB', 2048, 0, 1024 * 1024) * MiB,
    },
    deploymentJob: env.jobLimits('DEPLOYMENT_TIME_LIMIT_SECONDS', 1800),
    codehostBaseUrl: env.url('CODEHOST_BASE_URL', 'https://github.com'),
    git: {
      maxBytes: env.int('GIT_MAX_MB', 1024, 1, 1024 * 1024) * MiB,
      timeSeconds: env.int('GIT_TIME_LIMIT_SECONDS', 300, 1, 24 * 3600),
    },
    buildEnv: env.passThrough((name) => BUILD_ENV_NAMES.has(name) || /^(PIP_|NPM_CONFIG_)/.test(name)),
    nodeRuntime: path.resolve(env.string('NODEJS_RUNTIME', process.execPath)),
  };
}

/** Lowercase npm_config_* are left out on purpose: `npm run` sets them (prefix, cache) for the worker itself. */
const BUILD_ENV_NAMES = new Set([
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'NODE_EXTRA_CA_CERTS',
  'GIT_SSL_CAINFO',
]);
