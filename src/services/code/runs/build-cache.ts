// What a run reads of its deployment's build, read once per build by each worker: build directories are
// immutable once their deployment succeeded, and a build is only removed after its deployment's build_path was
// cleared with no open run referring to it (build-retention.ts), so a run that found build_path set executes a
// build whose manifest, interpreter and work directory are still the ones read the first time. Before, every
// run read and parsed manifest.json (an untrusted-file read) and checked both paths again.
import fs from 'node:fs/promises';
import { LRUCache } from 'lru-cache';
import { BuildManifest, readManifest } from '../../../runtime/manifest';

/** Builds remembered by a worker; the least recently used one is forgotten past this (a manifest is < 1 KB). */
const MAX_BUILDS = 1_000;

const builds = new LRUCache<string, Promise<BuildManifest>>({ max: MAX_BUILDS });

/** Reads and checks a build (its manifest, an executable interpreter, its work directory). */
async function readBuild(buildPath: string): Promise<BuildManifest> {
  const manifest = await readManifest(buildPath).catch((err: Error) => {
    throw new BuildUnreadable('cannot be read', err);
  });
  try {
    await fs.access(manifest.interpreter, fs.constants.X_OK);
    await fs.access(manifest.workDir);
  } catch (err) {
    throw new BuildUnreadable('is incomplete', err as Error);
  }
  return manifest;
}

export class BuildUnreadable extends Error {
  constructor(
    readonly what: 'cannot be read' | 'is incomplete',
    cause: Error,
  ) {
    super(cause.message);
  }
}

/**
 * The manifest of the build at `buildPath`, checked; remembered once read. A build that could not be read is
 * not remembered (it may be complete on the next run's read). Throws BuildUnreadable.
 */
export function manifestOfBuild(buildPath: string): Promise<BuildManifest> {
  const known = builds.get(buildPath);
  if (known) return known;
  const reading = readBuild(buildPath);
  builds.set(buildPath, reading);
  reading.catch(() => {
    if (builds.get(buildPath) === reading) builds.delete(buildPath);
  });
  return reading;
}
