// Clones a codehost repository with the git CLI: `<codehostBaseUrl>/<owner>/<name>.git`, the branch (or the
// tag when given), then the requested commit, and answers the commit that was checked out. An access token
// travels as an HTTP header through git's environment (GIT_CONFIG_*), so it never appears in a URL, in
// argv, in .git/config or in logs; .git is removed after checkout anyway (builds do not need history).
//
// The repository is hostile input: git runs inside the sandbox (Sandbox.wrap, as the build's own unprivileged
// identity, writing only the build directory, behind the run firewall), never as the worker's user; the clone
// and checkout are stopped past GIT_MAX_MB on disk or GIT_TIME_LIMIT_SECONDS; and the tree it leaves is
// checked as an archive's is (archive.ts): a link leading out of it or a special file refuses the deployment.
// The code host's address goes through the outbound address policy first (checkCodehostAddress).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OutboundRefused, type OutboundPolicy } from '../../security/outbound-policy';
import { DeploymentFailure } from '../build/failure';
import { OutputTail, runStep } from '../build/build-process';
import type { Wrapped } from '../sandbox/sandbox';
import { readUntrustedText } from '../untrusted-file';
import { checkLinksOnDisk } from './archive';

export interface GitSource {
  owner: string;
  name: string;
  push: { branch: string; tag?: string };
}

export interface GitLimits {
  /** Bytes the checkout (with its .git) may take on disk (GIT_MAX_MB). */
  maxBytes: number;
  /** Wall time of the clone and checkout (GIT_TIME_LIMIT_SECONDS). */
  timeSeconds: number;
}

export interface CloneOptions {
  baseUrl: string;
  source: GitSource;
  /** Check out this commit instead of the branch/tag head. */
  commitSha?: string;
  accessToken?: string;
  dest: string;
  env: Record<string, string>;
  /** git as the sandbox runs it: the build's identity, writing the build directory, seeing `readOnly` too. */
  isolate: (command: { file: string; argv: string[]; cwd: string }, extra?: { readOnly?: string[] }) => Wrapped;
  limits: GitLimits;
  /** The outbound address policy: the code host is the operator's, but the clone is made on a tenant's behalf. */
  outbound: OutboundPolicy;
  output: OutputTail;
  cancelled: Promise<never>;
}

/** Owner and repository names as code hosts allow them: no `/`, no `..`, nothing git would read as an option. */
const SAFE_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;
const SAFE_REF = /^[^-\s~^:?*[\\][^\s~^:?*[\\]*$/;

export function repositoryUrl(baseUrl: string, source: GitSource): string {
  for (const [what, value] of [
    ['owner', source.owner],
    ['name', source.name],
  ] as const) {
    if (!SAFE_NAME.test(value) || value === '.' || value === '..') {
      throw new DeploymentFailure('CloneFailed', `The repository ${what} ${JSON.stringify(value)} is not a valid name`);
    }
  }
  return `${baseUrl}/${source.owner}/${source.name}.git`;
}

/**
 * The one call site of the outbound address policy for git: every address the code host's name resolves to
 * must be allowed. (The sandbox's firewall holds the clone to the same ranges; this check says why early.)
 */
export async function checkCodehostAddress(url: URL, outbound: OutboundPolicy): Promise<void> {
  await outbound.checkUrl(url.href).catch((err: unknown) => {
    throw err instanceof OutboundRefused ? new DeploymentFailure('CloneFailed', err.message) : err;
  });
}

/** Bytes on disk under `dir` (links and special files counted as themselves, never followed). */
async function diskBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const st = await fs.lstat(path.join(entry.parentPath, entry.name)).catch(() => undefined);
    if (st) total += st.blocks * 512;
  }
  return total;
}

/** Rejects once `dir` takes more than `maxBytes` (measured every second) or `timeSeconds` have passed. */
function watchLimits(dir: string, limits: GitLimits): { exceeded: Promise<never>; stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const exceeded = new Promise<never>((_, reject) => {
    const deadline = Date.now() + limits.timeSeconds * 1000;
    const check = async () => {
      if (stopped) return;
      if (Date.now() > deadline) {
        return reject(
          new DeploymentFailure(
            'RepositoryTooLarge',
            `The repository took longer than ${limits.timeSeconds} s to clone (GIT_TIME_LIMIT_SECONDS)`,
          ),
        );
      }
      const bytes = await diskBytes(dir);
      if (bytes > limits.maxBytes) return reject(tooLarge(limits));
      if (!stopped) timer = setTimeout(() => void check(), 1_000);
    };
    timer = setTimeout(() => void check(), 1_000);
  });
  exceeded.catch(() => undefined);
  return {
    exceeded,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

const tooLarge = (limits: GitLimits) =>
  new DeploymentFailure(
    'RepositoryTooLarge',
    `The repository takes more than ${Math.round(limits.maxBytes / 1024 / 1024)} MB on disk (GIT_MAX_MB)`,
  );

/** A checked-out tree holds files, directories and links that stay inside it; nothing else. */
async function checkTree(root: string): Promise<void> {
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() || entry.isDirectory() || entry.isSymbolicLink()) continue;
    throw new DeploymentFailure(
      'UnsafeRepository',
      `The repository was refused: ${JSON.stringify(path.relative(root, path.join(entry.parentPath, entry.name)))} is a special file`,
    );
  }
  try {
    await checkLinksOnDisk(root);
  } catch (err) {
    if (err instanceof DeploymentFailure)
      throw new DeploymentFailure(
        'UnsafeRepository',
        err.message
          .replace('The archive was refused', 'The repository was refused')
          .replace('outside the archive', 'outside the repository'),
      );
    throw err;
  }
}

export async function cloneRepository(opts: CloneOptions): Promise<{ commitSha: string }> {
  const url = repositoryUrl(opts.baseUrl, opts.source);
  const ref = opts.source.push.tag ?? opts.source.push.branch;
  if (!SAFE_REF.test(ref))
    throw new DeploymentFailure('CloneFailed', `${JSON.stringify(ref)} is not a valid branch or tag name`);
  if (opts.commitSha !== undefined && !/^[0-9a-fA-F]{4,64}$/.test(opts.commitSha)) {
    throw new DeploymentFailure(
      'CloneFailed',
      `commit_sha ${JSON.stringify(opts.commitSha)} is not a hexadecimal commit id`,
    );
  }
  const parsed = new URL(url);
  const readOnly: string[] = [];
  // git's global config: none, but for a local code host (file://, a mirror the operator keeps) whose
  // repositories belong to another user than the build's, which git would otherwise refuse to read.
  const gitConfig = path.join(path.dirname(opts.dest), '.clone-gitconfig');
  let globalConfig = '/dev/null';
  if (parsed.protocol === 'file:') {
    const repository = fileURLToPath(parsed);
    if (await fs.stat(repository).catch(() => undefined)) readOnly.push(repository);
    // The build's directory is the build's: never write through something planted there (O_EXCL).
    await fs.rm(gitConfig, { force: true });
    await fs.writeFile(gitConfig, `[safe]\n\tdirectory = ${repository}\n`, { mode: 0o644, flag: 'wx' });
    globalConfig = gitConfig;
  } else {
    await checkCodehostAddress(parsed, opts.outbound);
  }
  const env: Record<string, string> = {
    ...opts.env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: globalConfig,
  };
  if (opts.accessToken) {
    const basic = Buffer.from(`x-access-token:${opts.accessToken}`).toString('base64');
    Object.assign(env, {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    });
  }
  const watch = watchLimits(opts.dest, opts.limits);
  const cancelled = Promise.race([opts.cancelled, watch.exceeded]);
  const git = async (argv: string[], cwd: string) => {
    const result = await runStep({
      file: 'git',
      argv,
      cwd,
      env,
      isolate: (command) => opts.isolate(command, { readOnly }),
      output: opts.output,
      cancelled,
    });
    return result.code === 0;
  };
  try {
    if (
      !(await git(
        ['clone', '--quiet', '--no-checkout', `--branch=${ref}`, '--', url, opts.dest],
        path.dirname(opts.dest),
      ))
    ) {
      throw new DeploymentFailure(
        'CloneFailed',
        `git clone of ${opts.source.owner}/${opts.source.name} (${opts.source.push.tag ? 'tag' : 'branch'} ${ref}) failed`,
      );
    }
    const target = opts.commitSha ?? 'HEAD';
    if (!(await git(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', target, '--'], opts.dest))) {
      throw new DeploymentFailure(
        'CloneFailed',
        `Commit ${target} was not found in ${opts.source.owner}/${opts.source.name}`,
      );
    }
  } finally {
    watch.stop();
    await fs.rm(gitConfig, { force: true });
  }
  if ((await diskBytes(opts.dest)) > opts.limits.maxBytes) throw tooLarge(opts.limits);
  // A detached HEAD holds the commit id itself; read as a file the clone wrote.
  const head = (await readUntrustedText(opts.dest, '.git/HEAD', { maxBytes: 256 }))?.trim() ?? '';
  if (!/^[0-9a-f]{40,64}$/.test(head)) throw new Error(`.git/HEAD of the checkout holds ${JSON.stringify(head)}`);
  await fs.rm(path.join(opts.dest, '.git'), { recursive: true, force: true });
  await checkTree(opts.dest);
  return { commitSha: head };
}
