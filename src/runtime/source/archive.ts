// Unpacks a code archive (.zip, .tar.gz/.tgz, .tar) into a fresh directory, refusing anything that could
// write or point outside it: absolute names, `..` segments, symlinks whose target leaves the directory
// (checked by name first, and again on disk once everything is written, which also catches link chains),
// devices and FIFOs. Links are made only after every file is written, so no file is written through one.
//
// Archive bombs: one streaming pass, never more than a chunk in memory. Inflated bytes are counted as they
// stream (the tar stream itself, and each zip entry's actual output, not only its declared size); each header
// is checked before its body is written, and the first refusal stops the stream. (tar's own Parser is fed
// the already inflated stream: its built-in gunzip inflates each read of 16 MB at once, which took the worker
// to 4 GB for a 23 MB bomb.)
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import * as tar from 'tar';
import yauzl from 'yauzl';
import { DeploymentFailure } from '../build/failure';
import { isInside } from '../build/source-paths';

/** Unpacked bytes and entries allowed per archive (a build's disk quota may lower the bytes). */
export const MAX_UNPACKED_BYTES = 4 * 1024 ** 3;
export const MAX_ARCHIVE_ENTRIES = 100_000;
/** A link target is a path: anything longer is not one (and is never held in memory). */
const MAX_LINK_TARGET_BYTES = 4096;
/** Reads of the archive file: small, so that a read inflates to little before backpressure applies. */
const READ_CHUNK_BYTES = 64 * 1024;

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

const tooBig = (maxBytes: number) =>
  new DeploymentFailure('InvalidArchive', `The archive unpacks to more than ${maxBytes} bytes`);

/** Running totals of one archive: every entry and every byte it inflates to, refused past the limits. */
class Tally {
  bytes = 0;
  entries = 0;
  constructor(readonly maxBytes: number) {}

  entry(declaredBytes: number): void {
    this.entries += 1;
    if (this.entries > MAX_ARCHIVE_ENTRIES)
      throw new DeploymentFailure('InvalidArchive', `The archive has more than ${MAX_ARCHIVE_ENTRIES} entries`);
    // Refused at the header, before a byte of the body is inflated.
    if (this.bytes + declaredBytes > this.maxBytes) throw tooBig(this.maxBytes);
  }

  inflated(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.maxBytes) throw tooBig(this.maxBytes);
  }

  /** A pass-through that counts what flows through it (and fails the pipeline past the limit). */
  counter(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        try {
          this.inflated(chunk.length);
          done(null, chunk);
        } catch (err) {
          done(err as Error);
        }
      },
    });
  }
}

interface DeferredLinks {
  hard: Array<{ at: string; existing: string }>;
  symbolic: Array<{ at: string; target: string }>;
}

/** Hard links, then symlinks: made once every file is written, so nothing is ever written through them. */
async function makeLinks(links: DeferredLinks): Promise<void> {
  try {
    for (const link of links.hard) await fs.link(link.existing, link.at);
    for (const link of links.symbolic) await fs.symlink(link.target, link.at);
  } catch (err) {
    throw new DeploymentFailure('InvalidArchive', `The archive could not be unpacked: ${(err as Error).message}`);
  }
}

const fileMode = (mode: number | undefined) => ((mode ?? 0) & 0o111 ? 0o755 : 0o644);
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

async function startsWithGzip(file: string): Promise<boolean> {
  const handle = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head.equals(GZIP_MAGIC);
  } finally {
    await handle.close();
  }
}

/** A failure of the archive's own bytes or of writing them, as the user's failure. */
const asArchiveFailure = (err: unknown): unknown =>
  err instanceof DeploymentFailure
    ? err
    : new DeploymentFailure('InvalidArchive', `The archive could not be unpacked: ${(err as Error).message}`);

async function unpackTar(file: string, dest: string, maxBytes: number): Promise<void> {
  const tally = new Tally(maxBytes);
  const links: DeferredLinks = { hard: [], symbolic: [] };
  const source = createReadStream(file, { highWaterMark: READ_CHUNK_BYTES });
  const inflated: Readable = (await startsWithGzip(file)) ? source.pipe(createGunzip()) : source;
  source.on('error', (err) => inflated.destroy(err));
  // zstd: false -- the stream is inflated here, counted; the Parser must not inflate (or sniff) anything itself.
  const parser = new tar.Parser({ strict: true, zstd: false });
  let refusal: unknown;
  let wake: () => void = () => undefined;
  const refuse = (err: unknown) => {
    refusal ??= asArchiveFailure(err);
    wake();
  };
  const writes = new Set<Promise<void>>();
  let sawEnd = false;
  parser.on('error', (err: Error) =>
    refuse(new DeploymentFailure('InvalidArchive', `The archive could not be read as tar: ${err.message}`)),
  );
  parser.on('eof', () => {
    sawEnd = true;
    wake();
  });
  parser.on('entry', (entry: tar.ReadEntry) => {
    if (refusal) return void entry.resume();
    const name = entry.path;
    const at = path.join(dest, name);
    try {
      tally.entry(entry.size ?? 0);
      switch (entry.type) {
        case 'SymbolicLink':
          checkEntry(name, entry.linkpath ?? '');
          links.symbolic.push({ at, target: entry.linkpath ?? '' });
          return void entry.resume();
        case 'Link':
          checkEntry(name);
          checkEntry(entry.linkpath ?? '');
          links.hard.push({ at, existing: path.join(dest, entry.linkpath ?? '') });
          return void entry.resume();
        case 'Directory':
          checkEntry(name);
          entry.resume();
          return void track(fs.mkdir(at, { recursive: true }).then(() => undefined));
        case 'File':
        case 'OldFile':
        case 'ContiguousFile':
          checkEntry(name);
          // The entry holds its first chunk meanwhile; the parser stops taking input until it flows.
          return void track(
            fs
              .mkdir(path.dirname(at), { recursive: true })
              .then(() => pipeline(entry, createWriteStream(at, { mode: fileMode(entry.mode) }))),
          );
        default:
          throw unsafe(name, `is a ${entry.type}, which is not allowed`);
      }
    } catch (err) {
      entry.resume();
      refuse(err);
    }
  });
  const track = (write: Promise<void>) => {
    const tracked = write.catch(refuse).finally(() => writes.delete(tracked));
    writes.add(tracked);
  };
  const parsed = new Promise<void>((resolve) => parser.on('end', resolve));
  try {
    for await (const chunk of inflated) {
      tally.inflated((chunk as Buffer).length);
      if (refusal || sawEnd) break;
      if (!parser.write(chunk as Buffer)) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          parser.once('drain', resolve);
        });
        parser.removeAllListeners('drain');
      }
      if (refusal || sawEnd) break;
    }
    if (!refusal) {
      parser.end();
      await Promise.race([parsed, new Promise<void>((resolve) => (wake = resolve))]);
    }
  } catch (err) {
    refuse(err);
  } finally {
    source.destroy();
    inflated.destroy();
  }
  await Promise.all([...writes]);
  if (refusal) throw refusal;
  await makeLinks(links);
}

const ZIP_MODE_SYMLINK = 0o120000;
const ZIP_MODE_TYPE = 0o170000;

async function unpackZip(file: string, dest: string, maxBytes: number): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(file, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true });
  } catch (err) {
    throw new DeploymentFailure('InvalidArchive', `The archive could not be read as zip: ${(err as Error).message}`);
  }
  const tally = new Tally(maxBytes);
  const links: DeferredLinks = { hard: [], symbolic: [] };
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
          tally.entry(entry.uncompressedSize);
          const at = path.join(dest, name);
          if (name.endsWith('/')) {
            checkEntry(name);
            await fs.mkdir(at, { recursive: true });
          } else if ((mode & ZIP_MODE_TYPE) === ZIP_MODE_SYMLINK) {
            if (entry.uncompressedSize > MAX_LINK_TARGET_BYTES) throw unsafe(name, 'is a link with an overlong target');
            const chunks: Buffer[] = [];
            // The declared size is checked above; validateEntrySizes stops a stream that inflates to more.
            for await (const chunk of await zip.openReadStreamPromise(entry)) {
              tally.inflated((chunk as Buffer).length);
              chunks.push(chunk as Buffer);
            }
            const target = Buffer.concat(chunks).toString('utf8');
            checkEntry(name, target);
            links.symbolic.push({ at, target });
          } else {
            checkEntry(name);
            await fs.mkdir(path.dirname(at), { recursive: true });
            await pipeline(
              await zip.openReadStreamPromise(entry),
              tally.counter(),
              createWriteStream(at, { mode: fileMode(mode) }),
            );
          }
          zip.readEntry();
        })().catch((err: unknown) => reject(asArchiveFailure(err)));
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  await makeLinks(links);
}

/** Every symlink under `root` must resolve inside it (or dangle inside it). */
async function checkLinksOnDisk(root: string): Promise<void> {
  const realRoot = await fs.realpath(root);
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isSymbolicLink()) continue;
    const at = path.join(entry.parentPath, entry.name);
    const real = await fs.realpath(at).catch(() => undefined);
    if (real !== undefined && !isInside(realRoot, real))
      throw unsafe(path.relative(root, at), 'is a link pointing outside the archive');
  }
}

/** Unpacks `file` into `dest`; DeploymentFailure (UnsafeArchive, InvalidArchive) when it is refused. */
export async function unpackArchive(
  kind: ArchiveKind,
  file: string,
  dest: string,
  maxBytes = MAX_UNPACKED_BYTES,
): Promise<void> {
  await fs.mkdir(dest, { recursive: true });
  if (kind === 'zip') await unpackZip(file, dest, maxBytes);
  else await unpackTar(file, dest, maxBytes);
  await checkLinksOnDisk(dest);
}
