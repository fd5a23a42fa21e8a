// Paths named by users (config file names, paths inside a config file) must stay inside the source:
// resolved lexically AND through symlinks, so `../x`, `/etc/passwd` or a link pointing out are refused.
import fs from 'node:fs/promises';
import path from 'node:path';
import { DeploymentFailure } from './failure';

/** True when `candidate` is `root` or below it (both absolute and normalized). */
export const isInside = (root: string, candidate: string) => {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/**
 * Resolves a path from a config file: relative to `baseDir`, or from the source root when it starts with
 * `/`. Refuses paths outside the source. The file need not exist (callers check that themselves).
 */
export async function resolveInSource(
  sourceRoot: string,
  baseDir: string,
  given: string,
  what: string,
): Promise<string> {
  const resolved = given.startsWith('/') ? path.join(sourceRoot, given) : path.resolve(baseDir, given);
  const outside = () =>
    new DeploymentFailure('InvalidConfig', `${what} ${JSON.stringify(given)} points outside the source`);
  if (!isInside(sourceRoot, resolved)) throw outside();
  const realRoot = await fs.realpath(sourceRoot);
  const real = await fs.realpath(resolved).catch(() => undefined);
  if (real !== undefined && !isInside(realRoot, real)) throw outside();
  return resolved;
}

/** Requires a regular file (after symlinks) at `file`. */
export async function requireFile(file: string, shownAs: string, what: string): Promise<void> {
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat?.isFile())
    throw new DeploymentFailure('FileNotFound', `${what} ${JSON.stringify(shownAs)} was not found in the source`);
}
