// Reads a build artifact (artifact-pack.ts) back into a directory. The artifact's digest is checked before a
// byte of it is parsed (fetchVerified), but its content is a user's build, so the unpacking treats it as
// hostile all the same (docs/security.md):
// - names: no absolute path, no `..`, `.` or empty segment, no NUL;
// - types: regular files, directories, symlinks and hard links only; files are written 0644 or 0755,
//   directories 0755, whatever the header says (owners: the unpacking worker's, then the caller's chown);
// - links are made only once every file is written, so nothing is ever written through one, and an entry
//   below a link's path makes that link fail (the path is a real directory by then): refused;
// - a symlink's relative target must stay inside the tree; absolute targets are kept (a venv's interpreter;
//   the packer rewrote every relative target that leaves the tree to one), never followed by the worker;
// - a hard link must name a regular file of the same artifact written before it;
// - at most `maxBytes` inflated (counted as they stream): an artifact is never larger than BUILD_DISK_MB.
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import * as tar from 'tar';
import { writeDigested } from './artifact-pack';

/** Why a build artifact could not be used: BuildCorrupt (not the recorded bytes), UnsafeBuild, BuildUnavailable (gone). */
export class BuildArtifactRefused extends Error {
  constructor(
    readonly reason: 'BuildCorrupt' | 'UnsafeBuild' | 'BuildUnavailable',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Streams `stream` into `file`, hashing what it reads; refuses (BuildCorrupt, the file removed) bytes whose
 * sha256 or size is not the recorded one. Nothing of the artifact is parsed before this passed.
 */
export async function fetchVerified(
  stream: Readable,
  file: string,
  expected: { sha256: string; size?: number | null },
): Promise<void> {
  const { sha256, size } = await writeDigested(stream, file);
  if (sha256 !== expected.sha256 || (expected.size != null && size !== Number(expected.size))) {
    await fs.rm(file, { force: true });
    throw new BuildArtifactRefused(
      'BuildCorrupt',
      `The build artifact's digest is sha256:${sha256} (${size} bytes), not the recorded sha256:${expected.sha256}`,
    );
  }
}

const unsafe = (name: string, why: string) =>
  new BuildArtifactRefused('UnsafeBuild', `The build artifact was refused: entry ${JSON.stringify(name)} ${why}`);

/** The entry's name without its trailing `/`, refused unless it is a plain relative path. */
function checkName(raw: string): string {
  const name = raw.endsWith('/') ? raw.slice(0, -1) : raw;
  if (name.startsWith('/')) throw unsafe(raw, 'has an absolute path');
  const segments = name.split('/');
  if (segments.includes('..')) throw unsafe(raw, 'contains `..`');
  if (name.includes('\0') || segments.some((s) => s === '' || s === '.')) throw unsafe(raw, 'is not a plain path');
  return name;
}

function checkSymlink(name: string, target: string): void {
  if (target === '' || target.includes('\0')) throw unsafe(name, 'is a link without a target');
  if (path.posix.isAbsolute(target)) return;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(name), target));
  if (resolved === '..' || resolved.startsWith('../'))
    throw unsafe(name, `is a link pointing outside the build (${JSON.stringify(target)})`);
}

/**
 * Unpacks the gzipped tar `file` into `dest` (made here, must not exist); BuildArtifactRefused when refused.
 * Answers the bytes of its files and links (what the tree takes of a local build cache).
 */
export async function unpackBuild(file: string, dest: string, maxBytes: number): Promise<number> {
  await fs.mkdir(dest, { mode: 0o755 });
  let bytes = 0;
  const files = new Set<string>();
  const symlinks: Array<{ at: string; target: string }> = [];
  const hardLinks: Array<{ at: string; existing: string }> = [];
  const writes: Array<Promise<void>> = [];
  /** Files being written: destroyed on a refusal, since the parser stops feeding them. */
  const live = new Set<tar.ReadEntry>();
  let refusal: unknown;
  let inflated = 0;
  const parser = new tar.Parser({ strict: true, zstd: false });
  parser.on('error', (err: Error) => (refusal ??= unsafe('', `is not readable as tar: ${err.message}`)));
  parser.on('entry', (entry: tar.ReadEntry) => {
    try {
      if (refusal) return void entry.resume();
      const name = checkName(entry.path);
      const at = path.join(dest, name);
      switch (entry.type) {
        case 'Directory':
          entry.resume();
          return void writes.push(fs.mkdir(at, { recursive: true, mode: 0o755 }).then(() => undefined));
        case 'File':
        case 'OldFile':
        case 'ContiguousFile': {
          files.add(name);
          bytes += entry.size ?? 0;
          const mode = (entry.mode ?? 0) & 0o111 ? 0o755 : 0o644;
          // wx: a second entry of the same name is refused, never written over the first.
          live.add(entry);
          const write = fs
            .mkdir(path.dirname(at), { recursive: true, mode: 0o755 })
            .then(() => pipeline(entry, createWriteStream(at, { flags: 'wx', mode })))
            .finally(() => live.delete(entry));
          return void writes.push(write);
        }
        case 'SymbolicLink':
          checkSymlink(name, entry.linkpath ?? '');
          symlinks.push({ at, target: entry.linkpath ?? '' });
          bytes += (entry.linkpath ?? '').length;
          return void entry.resume();
        case 'Link': {
          const existing = checkName(entry.linkpath ?? '');
          if (!files.has(existing)) throw unsafe(name, 'is a hard link to no file of the build');
          hardLinks.push({ at, existing: path.join(dest, existing) });
          return void entry.resume();
        }
        default:
          throw unsafe(name, `is a ${entry.type}, which a build may not hold`);
      }
    } catch (err) {
      entry.resume();
      refusal ??= err;
    }
  });
  const ended = new Promise<void>((resolve) => parser.on('end', resolve));
  const gunzip = createReadStream(file).pipe(createGunzip());
  try {
    for await (const chunk of gunzip) {
      inflated += (chunk as Buffer).length;
      if (inflated > maxBytes) refusal ??= unsafe('', `unpacks to more than ${maxBytes} bytes`);
      if (refusal) break;
      if (!parser.write(chunk as Buffer)) await new Promise((resolve) => parser.once('drain', resolve));
    }
    if (!refusal) {
      parser.end();
      await ended;
    }
  } catch (err) {
    refusal ??= unsafe('', `is not readable: ${(err as Error).message}`);
  } finally {
    gunzip.destroy();
    if (refusal) for (const entry of live) entry.destroy(new Error('refused'));
  }
  const written = await Promise.allSettled(writes);
  const failed = written.find((w) => w.status === 'rejected');
  if (!refusal && failed) refusal = unsafe('', `could not be written: ${(failed.reason as Error).message}`);
  if (refusal) throw refusal;
  // EEXIST: a link over an entry of the same name, or over a directory that entries were written below.
  const link = (make: () => Promise<void>, at: string) =>
    make().catch((err: Error) => {
      throw unsafe(path.relative(dest, at), `could not be linked: ${err.message}`);
    });
  for (const l of hardLinks) await link(() => fs.link(l.existing, l.at), l.at);
  for (const l of symlinks) await link(() => fs.symlink(l.target, l.at), l.at);
  return bytes;
}
