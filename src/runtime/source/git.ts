// Clones a codehost repository with the git CLI: `<codehostBaseUrl>/<owner>/<name>.git`, the branch (or the
// tag when given), then the requested commit, and answers the commit that was checked out. An access token
// travels as an HTTP header through git's environment (GIT_CONFIG_*), so it never appears in a URL, in
// argv, in .git/config or in logs; .git is removed after checkout anyway (builds do not need history).
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DeploymentFailure } from '../build/failure';
import { OutputTail, runStep, unconfined } from '../build/build-process';

export interface GitSource {
  owner: string;
  name: string;
  push: { branch: string; tag?: string };
}

export interface CloneOptions {
  baseUrl: string;
  source: GitSource;
  /** Check out this commit instead of the branch/tag head. */
  commitSha?: string;
  accessToken?: string;
  dest: string;
  env: Record<string, string>;
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
  const env: Record<string, string> = { ...opts.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
  if (opts.accessToken) {
    const basic = Buffer.from(`x-access-token:${opts.accessToken}`).toString('base64');
    Object.assign(env, {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    });
  }
  const git = async (argv: string[], cwd: string) => {
    const result = await runStep({
      file: 'git',
      argv,
      cwd,
      env,
      isolate: unconfined,
      output: opts.output,
      cancelled: opts.cancelled,
    });
    return result.code === 0;
  };
  await fs.mkdir(path.dirname(opts.dest), { recursive: true });
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
  const { stdout } = await promisify(execFile)('git', ['rev-parse', 'HEAD'], { cwd: opts.dest, env });
  const commitSha = stdout.trim();
  if (!/^[0-9a-f]{40,64}$/.test(commitSha)) throw new Error(`git rev-parse HEAD answered ${JSON.stringify(stdout)}`);
  await fs.rm(path.join(opts.dest, '.git'), { recursive: true, force: true });
  return { commitSha };
}
