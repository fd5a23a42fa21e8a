// Builds a fetched source into its deployment's build directory and writes the manifest that runs read.
//   python3: python3 -m venv <build>/venv (with pip only when there is a requirements file or a build
//            script), pre-build script, pip install -r requirements, post-build script
//   nodejs:  pre-build script, npm ci / npm install --omit=dev (when there is a package.json), post-build
// Every step runs in the config file's directory with a clean environment (see buildEnvironment).
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { BuildManifest, writeManifest } from '../manifest';
import type { DeployConfig } from './config-file';
import { findTool } from '../process/confine';
import type { Wrapped } from '../sandbox/sandbox';
import { describeExit, OutputTail, runStep } from './build-process';
import { DeploymentFailure, FailureReason } from './failure';

/** System directories only: nothing from the worker's PATH (pyenv shims, npm's bin dirs). */
const SAFE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface BuildContext {
  buildPath: string;
  /** HOME and TMPDIR of the build steps (removed once the build is done). */
  home: string;
  /** Shared by all builds (pip and npm download caches). */
  cacheDir: string;
  /** Proxy, CA and PIP_*, NPM_CONFIG_* variables from the worker (config.buildEnv). */
  passthroughEnv: Record<string, string>;
  /** The Node.js of `nodejs` structures (config.nodeRuntime): recorded as their interpreter, its npm on PATH. */
  nodeRuntime: string;
  /** Every step through the sandbox (Sandbox.wrap with the build's identity). */
  isolate: (command: { file: string; argv: string[]; cwd: string }) => Wrapped;
  output: OutputTail;
  cancelled: Promise<never>;
}

let python3Path: Promise<string> | undefined;

/**
 * The real python3 binary: the system's (/usr/bin, ...), which sandboxed user code can read, else asked of
 * python3 itself in the worker's environment (a pyenv/asdf shim would not work in the clean environment of
 * a build, nor inside the venv it creates).
 */
export function systemPython3(): Promise<string> {
  python3Path ??= promisify(execFile)(findTool('python3') ?? 'python3', [
    '-c',
    'import sys; print(sys.executable)',
  ]).then(
    (r) => r.stdout.trim(),
    (err: Error) => {
      python3Path = undefined;
      throw new Error(`python3 is not available on this worker: ${err.message}`);
    },
  );
  return python3Path;
}

/**
 * The environment of every build step (git included): nothing of the worker's own environment except
 * `passthrough` (config.buildEnv); the user code's Node (`nodeRuntime`) and its npm first on PATH; pip and npm
 * download caches shared by all builds under `cacheDir`.
 */
export function buildEnvironment(
  passthrough: Record<string, string>,
  nodeRuntime: string,
  home: string,
  cacheDir: string,
  binDirs: string[] = [],
): Record<string, string> {
  return {
    ...passthrough,
    PATH: [...binDirs, path.dirname(nodeRuntime), SAFE_PATH].join(':'),
    HOME: home,
    TMPDIR: home,
    LANG: 'C.UTF-8',
    PIP_CACHE_DIR: path.join(cacheDir, 'pip'),
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    PIP_NO_INPUT: '1',
    npm_config_cache: path.join(cacheDir, 'npm'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

/** Builds and writes the manifest; DeploymentFailure when the user's project does not build. */
export async function buildProject(ctx: BuildContext, config: DeployConfig): Promise<BuildManifest> {
  const venv = path.join(ctx.buildPath, 'venv');
  const python = config.runtime === 'python3';
  const env = buildEnvironment(
    ctx.passthroughEnv,
    ctx.nodeRuntime,
    ctx.home,
    ctx.cacheDir,
    python ? [path.join(venv, 'bin')] : [],
  );
  const step = async (file: string, argv: string[], failure: FailureReason, what: string) => {
    const result = await runStep({
      file,
      argv,
      cwd: config.workDir,
      env,
      isolate: ctx.isolate,
      output: ctx.output,
      cancelled: ctx.cancelled,
    });
    // Stopped by a resource limit: the limit is the reason, named with its setting.
    if (result.limit) throw new DeploymentFailure(result.limit.reason, `${what} ${result.limit.message}`);
    if (result.code !== 0) throw new DeploymentFailure(failure, `${what} ${describeExit(result)}`);
  };
  const script = (file: string | undefined, what: string) =>
    file ? step('bash', [file], 'ScriptFailed', `${what} ${path.basename(file)}`) : undefined;

  let interpreter: string;
  if (python) {
    // pip (ensurepip: seconds) only when something may install packages; a bare venv takes ~0.1 s.
    const needsPip = Boolean(
      config.build.requirementsFile || config.build.preBuildInstallScript || config.build.postBuildInstallScript,
    );
    // Not a user failure when python3 itself is broken: a plain Error makes the deployment ERROR.
    const result = await runStep({
      file: await systemPython3(),
      argv: ['-m', 'venv', ...(needsPip ? [] : ['--without-pip']), venv],
      cwd: config.workDir,
      env,
      isolate: ctx.isolate,
      output: ctx.output,
      cancelled: ctx.cancelled,
    });
    if (result.limit) throw new DeploymentFailure(result.limit.reason, `python3 -m venv ${result.limit.message}`);
    if (result.code !== 0) throw new Error(`python3 -m venv ${describeExit(result)}: ${ctx.output.text().slice(-500)}`);
    interpreter = path.join(venv, 'bin', 'python');
    await script(config.build.preBuildInstallScript, 'The pre-build script');
    if (config.build.requirementsFile) {
      await step(
        interpreter,
        ['-m', 'pip', 'install', '-r', config.build.requirementsFile],
        'InstallFailed',
        'pip install',
      );
    }
  } else {
    interpreter = ctx.nodeRuntime;
    await script(config.build.preBuildInstallScript, 'The pre-build script');
    if (await exists(path.join(config.workDir, 'package.json'))) {
      const lockfile = await exists(path.join(config.workDir, 'package-lock.json'));
      await step(
        'npm',
        [lockfile ? 'ci' : 'install', '--omit=dev'],
        'InstallFailed',
        `npm ${lockfile ? 'ci' : 'install'}`,
      );
    }
  }
  await script(config.build.postBuildInstallScript, 'The post-build script');
  await fs.rm(ctx.home, { recursive: true, force: true });

  const manifest: BuildManifest = {
    version: 1,
    runtime: config.runtime,
    workDir: config.workDir,
    interpreter,
    mainFile: path.relative(config.workDir, config.mainFile),
    ...(python && config.runAsModule ? { runAsModule: true } : {}),
    ...(config.tool ? { tool: config.tool } : {}),
    ...(config.handler ? { handler: config.handler } : {}),
  };
  await writeManifest(ctx.buildPath, manifest);
  return manifest;
}

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );
