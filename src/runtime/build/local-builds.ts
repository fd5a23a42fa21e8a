// A worker's local build cache: the builds of deployments on this worker's own disk, each reached from the blob
// store, so that workers need not share BUILD_DIR (docs/production.md).
//
//   <BUILD_DIR>/<deployment_id>/                     the build, where its manifest says it is (built here, or
//                                                    fetched and unpacked here)
//   <BUILD_DIR>/.artifacts/<deployment_id>.<sha256>  this worker's copy is the artifact of that digest, complete;
//                                                    its mtime is the build's last use here (least recently used
//                                                    goes first), its content the bytes the copy takes
//   <BUILD_DIR>/.artifacts/{pack,fetch}-*            work in progress (the same filesystem: renamed into place)
//
// A worker that built a deployment publishes it (packs, uploads, records its own copy) and keeps running its
// own copy. Another worker fetches the artifact on the first run that needs it, verifies its digest, unpacks it
// (artifact-unpack.ts), gives it the owners of a build made here and renames it into place. Everything done to
// one deployment's copy (use, fetch, publish, eviction, removal) is serialized by a per-deployment lock, so
// concurrent runs fetch once. Past BUILD_LOCAL_CACHE_MB, the least recently used builds that no run uses are
// evicted (fetched again when needed). Builds without a recorded artifact (made before artifacts) are not
// this cache's: they are run where their build_path says, as before.
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from '../../blobs/blob-store';
import { buildArtifactKey, buildBlobPrefix } from '../../blobs/keys';
import type { Logger } from '../../logger';
import { packBuild } from './artifact-pack';
import { BuildArtifactRefused, fetchVerified, unpackBuild } from './artifact-unpack';
import { removeTree } from './package-cache';

/** What a deployment row records of its build's artifact. */
export interface BuildArtifact {
  key: string;
  sha256: string;
  size: number;
}

export interface LocalBuildsOptions {
  buildDir: string;
  blobs: BlobStore;
  /** BUILD_LOCAL_CACHE_MB: bytes of builds kept on this disk (builds in use are kept past it). */
  maxBytes: number;
  /** BUILD_DISK_MB: no build is larger, so no artifact may unpack to more. */
  maxBuildBytes: number;
  /** Gives a fetched tree the owners and modes of a build made here for that organization (sandbox.chownTree). */
  ownTree(dir: string, sandboxIndex: number): Promise<void>;
  /** Sandboxed: the builds root is 0711 (code may pass through it to its own build, never list it). */
  sandboxed: boolean;
  /** Of these deployments, the ones an open run uses anywhere (a BUILD_DIR still shared by several workers). */
  inUseElsewhere?(deploymentIds: string[]): Promise<Set<string>>;
  log: Logger;
}

interface Entry {
  sha256: string;
  bytes: number;
  usedAt: number;
}

const MARKER = /^([0-9a-f-]{36})\.([0-9a-f]{64})$/;

export class LocalBuilds {
  private readonly markers: string;
  private readonly entries = new Map<string, Entry>();
  private readonly users = new Map<string, number>();
  private readonly locks = new Map<string, Promise<void>>();
  private loaded?: Promise<void>;
  private evicting: Promise<void> = Promise.resolve();

  constructor(private readonly o: LocalBuildsOptions) {
    this.markers = path.join(o.buildDir, '.artifacts');
  }

  /** Where the build of `deploymentId` lives on this worker (the same on every worker: BUILD_DIR). */
  pathOf(deploymentId: string): string {
    return path.join(this.o.buildDir, deploymentId);
  }

  /**
   * The builder's side: packs the finished build at `buildPath`, uploads it and records this worker's copy
   * (when the build is where this cache keeps it: pathOf).
   */
  async publish(deploymentId: string, buildPath: string): Promise<BuildArtifact> {
    await this.load();
    const work = await fs.mkdtemp(path.join(this.markers, `pack-${deploymentId}-`));
    try {
      const file = path.join(work, 'build.tar.gz');
      const packed = await packBuild(buildPath, file);
      const key = buildArtifactKey(deploymentId, packed.sha256);
      // A retried attempt starts from nothing: what an earlier attempt uploaded goes.
      await this.o.blobs.deletePrefix(buildBlobPrefix(deploymentId));
      await this.o.blobs.put(key, createReadStream(file), packed.size);
      if (buildPath === this.pathOf(deploymentId)) {
        await this.exclusive(deploymentId, () => this.record(deploymentId, packed.sha256, packed.unpackedBytes));
        this.evictSoon();
      }
      return { key, sha256: packed.sha256, size: packed.size };
    } finally {
      await removeTree(work);
    }
  }

  /**
   * The runner's side: this worker's copy of the build of `artifact`, fetched first when there is none (or
   * another digest's, or an incomplete one); kept from eviction until `release`. BuildArtifactRefused when the
   * artifact is gone, corrupt or unsafe.
   */
  async use(
    deploymentId: string,
    artifact: BuildArtifact,
    sandboxIndex: number,
  ): Promise<{ path: string; release: () => void }> {
    await this.load();
    this.users.set(deploymentId, (this.users.get(deploymentId) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.users.get(deploymentId) ?? 1) - 1;
      if (left > 0) this.users.set(deploymentId, left);
      else this.users.delete(deploymentId);
    };
    try {
      const fetched = await this.exclusive(deploymentId, async () => {
        const entry = this.entries.get(deploymentId);
        if (entry?.sha256 === artifact.sha256 && (await exists(this.pathOf(deploymentId)))) {
          entry.usedAt = Date.now();
          const now = new Date();
          await fs.utimes(this.markerOf(deploymentId, entry.sha256), now, now).catch(() => undefined);
          return false;
        }
        await this.fetch(deploymentId, artifact, sandboxIndex);
        return true;
      });
      if (fetched) this.evictSoon();
      return { path: this.pathOf(deploymentId), release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Removes this worker's copy of a build (its marker first) and the directory; for the build cleanup. */
  async forget(deploymentId: string): Promise<void> {
    await this.load();
    await this.exclusive(deploymentId, () => this.remove(deploymentId));
  }

  /** Bytes of the builds this cache holds (for tests and logs). */
  heldBytes(): number {
    return [...this.entries.values()].reduce((sum, e) => sum + e.bytes, 0);
  }

  /** Deployment ids of the builds this cache holds. */
  held(): string[] {
    return [...this.entries.keys()];
  }

  /** Evicts least recently used builds no run uses until the cache is within its quota; one pass at a time. */
  evict(): Promise<void> {
    const pass = this.evicting.then(() => this.evictPass());
    this.evicting = pass.catch(() => undefined);
    return pass;
  }

  private evictSoon(): void {
    void this.evict().catch((err: Error) => this.o.log.warn({ err }, 'the local build cache could not be trimmed'));
  }

  private async evictPass(): Promise<void> {
    let total = this.heldBytes();
    if (total <= this.o.maxBytes) return;
    const idle = [...this.entries]
      .filter(([id]) => !this.users.has(id))
      .sort(([, a], [, b]) => a.usedAt - b.usedAt)
      .map(([id]) => id);
    const elsewhere = this.o.inUseElsewhere && idle.length ? await this.o.inUseElsewhere(idle) : new Set<string>();
    for (const id of idle) {
      if (total <= this.o.maxBytes) break;
      if (elsewhere.has(id)) continue;
      const bytes = this.entries.get(id)?.bytes ?? 0;
      // Re-checked under the lock: a run may have begun using it meanwhile.
      const gone = await this.exclusive(id, async () => {
        if (this.users.has(id) || !this.entries.has(id)) return false;
        await this.remove(id);
        return true;
      });
      if (!gone) continue;
      total -= bytes;
      this.o.log.info({ deploymentId: id, bytes, cacheBytes: total }, 'evicted a build from the local build cache');
    }
  }

  private async fetch(deploymentId: string, artifact: BuildArtifact, sandboxIndex: number): Promise<void> {
    const started = Date.now();
    const work = await fs.mkdtemp(path.join(this.markers, `fetch-${deploymentId}-`));
    try {
      const blob = await this.o.blobs.get(artifact.key);
      if (!blob)
        throw new BuildArtifactRefused('BuildUnavailable', 'The build artifact is missing from the blob store');
      const file = path.join(work, 'build.tar.gz');
      await fetchVerified(blob.stream, file, artifact);
      const fetchedAt = Date.now();
      const tree = path.join(work, 'build');
      const bytes = await unpackBuild(file, tree, this.o.maxBuildBytes);
      await fs.rm(file);
      await this.o.ownTree(tree, sandboxIndex);
      if (this.o.sandboxed) await fs.chmod(this.o.buildDir, 0o711);
      // What was there (an incomplete build of a crashed attempt, another digest's copy) goes first.
      await this.remove(deploymentId, work);
      await fs.rename(tree, this.pathOf(deploymentId));
      await this.record(deploymentId, artifact.sha256, bytes);
      this.o.log.info(
        { deploymentId, size: artifact.size, bytes, fetchMs: fetchedAt - started, unpackMs: Date.now() - fetchedAt },
        'fetched a build from the blob store',
      );
    } finally {
      await removeTree(work);
    }
  }

  /** Records this worker's copy: its marker (the only one of the deployment) and the entry. */
  private async record(deploymentId: string, sha256: string, bytes: number): Promise<void> {
    await this.removeMarkers(deploymentId);
    await fs.writeFile(this.markerOf(deploymentId, sha256), JSON.stringify({ bytes }), { mode: 0o600 });
    this.entries.set(deploymentId, { sha256, bytes, usedAt: Date.now() });
  }

  /** Marker, entry and directory of a deployment's copy; the directory moved into `scratch` first when given. */
  private async remove(deploymentId: string, scratch?: string): Promise<void> {
    await this.removeMarkers(deploymentId);
    this.entries.delete(deploymentId);
    const dir = this.pathOf(deploymentId);
    if (!(await exists(dir))) return;
    const bin = scratch ?? (await fs.mkdtemp(path.join(this.markers, 'gone-')));
    await fs.rename(dir, path.join(bin, 'old'));
    await removeTree(scratch ? path.join(bin, 'old') : bin);
  }

  private async removeMarkers(deploymentId: string): Promise<void> {
    const names = await fs.readdir(this.markers);
    for (const name of names.filter((n) => n.startsWith(`${deploymentId}.`)))
      await fs.rm(path.join(this.markers, name), { force: true });
  }

  private markerOf(deploymentId: string, sha256: string): string {
    return path.join(this.markers, `${deploymentId}.${sha256}`);
  }

  /** Serializes the work on one deployment's copy; the answer is `fn`'s. */
  private exclusive<T>(deploymentId: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(deploymentId) ?? Promise.resolve();
    const run = before.then(fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(deploymentId, tail);
    void tail.then(() => {
      if (this.locks.get(deploymentId) === tail) this.locks.delete(deploymentId);
    });
    return run;
  }

  /** Reads the markers once: the copies an earlier process left (a marker without its directory goes). */
  private load(): Promise<void> {
    this.loaded ??= (async () => {
      await fs.mkdir(this.markers, { recursive: true, mode: 0o700 });
      for (const name of await fs.readdir(this.markers)) {
        const at = path.join(this.markers, name);
        const match = MARKER.exec(name);
        if (!match) {
          // Work an earlier process left unfinished.
          if (/^(pack|fetch|gone)-/.test(name)) await removeTree(at);
          continue;
        }
        const [, id, sha256] = match;
        const stat = await fs.stat(at);
        const bytes = Number((JSON.parse(await fs.readFile(at, 'utf8')) as { bytes?: number }).bytes ?? 0);
        if (await exists(this.pathOf(id))) this.entries.set(id, { sha256, bytes, usedAt: stat.mtimeMs });
        else await fs.rm(at, { force: true });
      }
    })().catch((err: unknown) => {
      this.loaded = undefined;
      throw err;
    });
    return this.loaded;
  }
}

const exists = (p: string) =>
  fs.lstat(p).then(
    (st) => st.isDirectory(),
    () => false,
  );
