// Reads a file that user code could have written (a build's pyvenv.cfg, a build's manifest, a source's config
// file) without trusting anything about it: no link is followed, in the file's name or in any directory on the
// way to it; only a regular file is opened for reading (a FIFO, a socket or a device never is, so nothing can
// block the worker's file-system threads); at most `maxBytes` are read.
//
// Node has no openat(2), so the walk is done the way openat would do it: from a trusted directory (one the
// platform made, e.g. a build directory), each component is opened with O_PATH | O_NOFOLLOW *relative to the
// fd of its parent*, through the parent's /proc/self/fd/<fd> entry. O_PATH opens nothing (no FIFO open, no
// device open, no side effect), O_NOFOLLOW makes a link come back as the link itself, and fstat of each fd
// tells what it is: a directory to go on through, then a regular file, which is reopened for reading through
// its own /proc/self/fd entry (the same inode: a rename meanwhile changes nothing). So a process still
// writing into the tree cannot swap a component for a link between a check and the open.
import fs from 'node:fs/promises';
import path from 'node:path';

/** O_PATH (x86_64 and arm64; Node does not export it). */
const O_PATH = 0o10000000;
const { O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_DIRECTORY } = fs.constants;
// (libuv adds O_CLOEXEC to every open.)
const PATH_FLAGS = O_PATH | O_NOFOLLOW;

export type UntrustedFileProblem = 'missing' | 'link' | 'not-a-file' | 'too-large' | 'bad-name';

export class UntrustedFileError extends Error {
  constructor(
    readonly problem: UntrustedFileProblem,
    message: string,
  ) {
    super(message);
  }
}

const kindOf = (st: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean }) =>
  st.isSymbolicLink() ? 'a link' : st.isDirectory() ? 'a directory' : st.isFile() ? 'a file' : 'a special file';

/**
 * The bytes of `relative` under the trusted directory `root`, refusing (UntrustedFileError) a link anywhere
 * below `root`, anything but a regular file at the end, and a file over `maxBytes`.
 */
export async function readUntrustedFile(root: string, relative: string, opts: { maxBytes: number }): Promise<Buffer> {
  const parts = relative.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..') || path.isAbsolute(relative))
    throw new UntrustedFileError('bad-name', `${JSON.stringify(relative)} is not a path inside ${root}`);
  const shown = relative;
  const opened: fs.FileHandle[] = [];
  try {
    let dir = await fs.open(root, PATH_FLAGS | O_DIRECTORY);
    opened.push(dir);
    for (const [i, name] of parts.entries()) {
      let handle: fs.FileHandle;
      try {
        handle = await fs.open(`/proc/self/fd/${dir.fd}/${name}`, PATH_FLAGS);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
          throw new UntrustedFileError('missing', `${shown} does not exist`);
        throw err;
      }
      opened.push(handle);
      const st = await handle.stat();
      const last = i === parts.length - 1;
      if (st.isSymbolicLink())
        throw new UntrustedFileError('link', `${shown} is or passes through a link: not followed`);
      if (!last) {
        if (!st.isDirectory()) throw new UntrustedFileError('missing', `${shown} does not exist`);
        dir = handle;
        continue;
      }
      if (!st.isFile()) throw new UntrustedFileError('not-a-file', `${shown} is ${kindOf(st)}, not a regular file`);
      if (st.size > opts.maxBytes)
        throw new UntrustedFileError('too-large', `${shown} is ${st.size} bytes, more than ${opts.maxBytes}`);
      // The same inode, opened for reading now that it is known to be a regular file.
      const file = await fs.open(`/proc/self/fd/${handle.fd}`, O_RDONLY | O_NONBLOCK);
      opened.push(file);
      return await readAtMost(file, opts.maxBytes, shown);
    }
    throw new Error('unreachable');
  } finally {
    await Promise.all(opened.map((h) => h.close().catch(() => undefined)));
  }
}

/** Reads to the end, refusing a file that grew past `maxBytes` since its size was checked. */
async function readAtMost(file: fs.FileHandle, maxBytes: number, shown: string): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.min(maxBytes + 1, 64 * 1024));
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    total += bytesRead;
    if (total > maxBytes) throw new UntrustedFileError('too-large', `${shown} is more than ${maxBytes} bytes`);
    chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
  }
}

/** As text (UTF-8); undefined when the file is missing or refused. */
export async function readUntrustedText(
  root: string,
  relative: string,
  opts: { maxBytes: number },
): Promise<string | undefined> {
  try {
    return (await readUntrustedFile(root, relative, opts)).toString('utf8');
  } catch (err) {
    if (err instanceof UntrustedFileError) return undefined;
    throw err;
  }
}
