// A deployment's build as one immutable artifact (a gzipped tar), so that a worker on another host, with a disk
// of its own, can run it (src/runtime/build/local-builds.ts fetches and unpacks it: artifact-unpack.ts).
//
// The build is user-produced, but packing runs once its steps ended (no process of the build is left, the tree
// is the platform's again), so nothing changes under the packer. What it packs is what a run on any worker gets:
// before packing, the build is normalized in place, so that the builder's own copy and every unpacked copy are
// the same tree:
// - entries that are neither files, directories nor symlinks (FIFOs, sockets, devices a build script made)
//   are removed: no worker unpacks them;
// - a symlink whose relative target climbs out of the build (`../../x`) is rewritten to the absolute path it
//   resolved to, the same link at the same path: relative targets that leave the tree are what a hostile tar
//   uses, so the unpacker refuses every one of them, while absolute targets are kept (a venv's interpreter is
//   one: `venv/bin/python3 -> /usr/bin/python3`).
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform, type PipelineSource } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { isInside } from './source-paths';

export interface PackedArtifact {
  /** sha256 (hex) of the artifact's bytes, as stored. */
  sha256: string;
  /** Bytes of the artifact (compressed). */
  size: number;
  /** Bytes of the build's files and links as unpacked (what a worker's local build cache holds of it). */
  unpackedBytes: number;
}

/** The normalization above; answers the bytes of what stays (files and links themselves). */
export async function normalizeBuild(root: string): Promise<number> {
  let bytes = 0;
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    const at = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) continue;
    if (entry.isFile()) {
      bytes += (await fs.lstat(at)).size;
    } else if (entry.isSymbolicLink()) {
      const target = await fs.readlink(at);
      const resolved = path.resolve(path.dirname(at), target);
      if (!path.isAbsolute(target) && !isInside(root, resolved)) {
        await fs.unlink(at);
        await fs.symlink(resolved, at);
      }
      bytes += (await fs.lstat(at)).size;
    } else {
      await fs.rm(at, { force: true });
    }
  }
  return bytes;
}

/** Packs the build at `root` (normalized first) into the gzipped tar `file`; answers its digest and sizes. */
export async function packBuild(root: string, file: string): Promise<PackedArtifact> {
  const unpackedBytes = await normalizeBuild(root);
  // portable: no uid/gid/user names of this host (an unpacking worker gives the tree its own owners); no mtime,
  // so that the same tree packs to the same bytes. Symlinks are packed as links, never followed.
  const pack = tar.create(
    {
      cwd: root,
      gzip: true,
      portable: true,
      noMtime: true,
      filter: (_p, stat) => !('isFile' in stat) || stat.isFile() || stat.isDirectory() || stat.isSymbolicLink(),
    },
    (await fs.readdir(root)).sort(),
  );
  return { ...(await writeDigested(pack, file)), unpackedBytes };
}

/** Writes `source` to the new file `file` (mode 0600), answering the sha256 and size of what it wrote. */
export async function writeDigested(
  source: PipelineSource<Buffer>,
  file: string,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(source, tap, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
  return { sha256: hash.digest('hex'), size };
}
