// Unpacks a code archive (.zip, .tar.gz/.tgz, .tar) into a fresh directory, refusing anything that could
// write or point outside it: absolute names, `..` segments, symlinks whose target leaves the directory
// (checked by name first, and again on disk once everything is written, which also catches link chains),
// devices and FIFOs. Sizes are capped against archive bombs.
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import yauzl from 'yauzl';
import { DeploymentFailure } from '../build/failure';
import { isInside } from '../build/source-paths';

/** Unpacked bytes and entries allowed per archive. */
export const MAX_UNPACKED_BYTES = 4 * 1024 ** 3;
export const MAX_ARCHIVE_ENTRIES = 100_000;

export type ArchiveKind = 'zip' | 'tar';

export function archiveKindOf(assetPath: string): ArchiveKind | undefined {
  const name = assetPath.toLowerCase();
  if (name.endsWith('.zip')) return 'zip';
  if (name.endsWith('.tar.gz') || name.endsWith('.tgz') || name.endsWith('.tar')) return 'tar';
  return undefined;
}

const unsafe = (entry: string, why: string) =>
  new DeploymentFailure('UnsafeArchive', `The archive was refused: entry ${JSON.stringify(entry)} ${why}`);

/** Checks an entry name (and a link target, relative to the entry's directory) stays inside the root. */
function checkEntry(name: string, linkTarget?: string): void {
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name) || name.includes('\\'))
    throw unsafe(name, 'has an absolute path');
  if (name.split('/').includes('..')) throw unsafe(name, 'contains `..`');
  if (linkTarget === undefined) return;
  if (linkTarget.startsWith('/')) throw unsafe(name, `is a link to the absolute path ${JSON.stringify(linkTarget)}`);
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(name), linkTarget));
  if (target === '..' || target.startsWith('../'))
    throw unsafe(name, `is a link pointing outside the archive (${JSON.stringify(linkTarget)})`);
}

function tally(state: { bytes: number; entries: number }, bytes: number): void {
  state.bytes += bytes;
  state.entries += 1;
  if (state.bytes > MAX_UNPACKED_BYTES)
    throw new DeploymentFailure('InvalidArchive', `The archive unpacks to more than ${MAX_UNPACKED_BYTES} bytes`);
  if (state.entries > MAX_ARCHIVE_ENTRIES)
    throw new DeploymentFailure('InvalidArchive', `The archive has more than ${MAX_ARCHIVE_ENTRIES} entries`);
}

async function unpackTar(file: string, dest: string): Promise<void> {
  const state = { bytes: 0, entries: 0 };
  let refused: unknown;
  // First pass: read every header, write nothing.
  try {
    await tar.t({
      file,
      strict: true,
      onReadEntry: (entry) => {
        if (refused) return;
        try {
          const kind = entry.type;
          if (kind === 'SymbolicLink') checkEntry(entry.path, entry.linkpath ?? '');
          else if (kind === 'Link') checkEntry(entry.linkpath ?? '');
          else if (!['File', 'OldFile', 'ContiguousFile', 'Directory'].includes(kind))
            throw unsafe(entry.path, `is a ${kind}, which is not allowed`);
          checkEntry(entry.path);
          tally(state, entry.size ?? 0);
        } catch (err) {
          refused = err;
        }
      },
    });
  } catch (err) {
    throw (
      refused ??
      new DeploymentFailure('InvalidArchive', `The archive could not be read as tar: ${(err as Error).message}`)
    );
  }
  if (refused) throw refused;
  try {
    await tar.x({ file, cwd: dest, strict: true, preserveOwner: false });
  } catch (err) {
    throw new DeploymentFailure('InvalidArchive', `The archive could not be unpacked: ${(err as Error).message}`);
  }
}

const ZIP_MODE_SYMLINK = 0o120000;
const ZIP_MODE_TYPE = 0o170000;

async function unpackZip(file: string, dest: string): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true });
  } catch (err) {
    throw new DeploymentFailure('InvalidArchive', `The archive could not be read as zip: ${(err as Error).message}`);
  }
  const state = { bytes: 0, entries: 0 };
  // Links are made after every file is written, so no file is ever written through a link.
  const links: Array<{ at: string; target: string }> = [];
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (err: Error) => {
        // yauzl refuses unsafe names itself ("invalid relative path", "absolute path") while decoding them.
        reject(
          /relative path|absolute path|invalid characters/.test(err.message)
            ? new DeploymentFailure('UnsafeArchive', `The archive was refused: ${err.message}`)
            : new DeploymentFailure('InvalidArchive', `The archive could not be read as zip: ${err.message}`),
        );
      });
      zip.on('end', resolve);
      zip.on('entry', (entry: yauzl.Entry) => {
        (async () => {
          const name = entry.fileName;
          const mode = (entry.externalFileAttributes >>> 16) & 0xffff;
          tally(state, entry.uncompressedSize);
          const at = path.join(dest, name);
          if (name.endsWith('/')) {
            checkEntry(name);
            await fs.mkdir(at, { recursive: true });
          } else if ((mode & ZIP_MODE_TYPE) === ZIP_MODE_SYMLINK) {
            const chunks: Buffer[] = [];
            for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
            const target = Buffer.concat(chunks).toString('utf8');
            checkEntry(name, target);
            links.push({ at, target });
          } else {
            checkEntry(name);
            await fs.mkdir(path.dirname(at), { recursive: true });
            await pipeline(
              await zip.openReadStreamPromise(entry),
              createWriteStream(at, { mode: mode & 0o111 ? 0o755 : 0o644 }),
            );
          }
          zip.readEntry();
        })().catch(reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  for (const link of links) {
    try {
      await fs.symlink(link.target, link.at);
    } catch (err) {
      throw new DeploymentFailure('InvalidArchive', `The archive could not be unpacked: ${(err as Error).message}`);
    }
  }
}

/** Every symlink under `root` must resolve inside it (or dangle inside it). Also used for git sources. */
export async function checkLinksOnDisk(root: string): Promise<void> {
  const realRoot = await fs.realpath(root);
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isSymbolicLink()) continue;
    const at = path.join(entry.parentPath, entry.name);
    const real = await fs.realpath(at).catch(() => undefined);
    if (real !== undefined && !isInside(realRoot, real))
      throw unsafe(path.relative(root, at), 'is a link pointing outside the archive');
  }
}

export async function unpackArchive(kind: ArchiveKind, file: string, dest: string): Promise<void> {
  await fs.mkdir(dest, { recursive: true });
  if (kind === 'zip') await unpackZip(file, dest);
  else await unpackTar(file, dest);
  await checkLinksOnDisk(dest);
}
