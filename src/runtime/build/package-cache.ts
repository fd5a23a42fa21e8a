// The pip and npm download caches of builds: one per organization when sandboxed (a shared one could be
// poisoned), `<BUILD_DIR>/.cache/<gid>`, root-owned, setgid 2770: every build of the organization runs as a
// different uid of its group, so build steps run with umask 007 and what one build caches (directories
// 2770, npm's files 0660) the next can use. Each cache is trimmed, oldest first, to BUILD_CACHE_MB.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileTool } from './disk-quota';

/** The subdirectories builds write (PIP_CACHE_DIR, npm_config_cache; see buildEnvironment). */
const TOOL_CACHES = ['pip', 'npm'];

/**
 * `<buildDir>/.cache/<gid>`, made or repaired; root-owned, writable by the organization's group. `chown`
 * false: the rootless mode, where every build is the worker's own uid and a run sees only its own cache.
 */
export async function organizationCache(buildDir: string, gid: number, chown = true): Promise<string> {
  const root = path.join(buildDir, '.cache');
  await fs.mkdir(root, { recursive: true });
  await fs.chmod(root, 0o711);
  const dir = path.join(root, String(gid));
  await fs.mkdir(dir, { recursive: true });
  if (chown) await fs.chown(dir, process.geteuid?.() ?? 0, gid);
  await fs.chmod(dir, 0o2770);
  // A tool cache that the organization's group cannot write (made by a build before builds ran with umask
  // 007: 0755, one uid's) would leave every later build with its cache disabled: it goes, and is made again.
  for (const name of TOOL_CACHES) {
    const at = path.join(dir, name);
    const st = await fs.lstat(at).catch(() => undefined);
    if (st && (!st.isDirectory() || (st.mode & 0o070) !== 0o070)) await removeTree(at);
  }
  return dir;
}

/** Removes a tree that user code may be changing meanwhile (rm -rf never follows a link out of it). */
export async function removeTree(dir: string): Promise<void> {
  await fileTool('rm', ['-rf', '--one-file-system', '--', dir]);
}

/** Build steps run with umask 007: what they write is their organization group's (see above). */
export function withGroupUmask(command: { file: string; argv: string[]; cwd: string }) {
  return {
    ...command,
    file: '/bin/sh',
    argv: ['-c', 'umask 007 && exec "$@"', 'sh', command.file, ...command.argv],
  };
}

/**
 * Trims `dir` to `quotaBytes` (blocks in use), least recently used first (a file's later of access and
 * modification times); answers the bytes removed. The listing prints numbers only (no names to parse),
 * and `find -delete` removes by the cutoff time found, without following links.
 */
export async function trimCache(dir: string, quotaBytes: number): Promise<number> {
  const listing = await fileTool('find', [dir, '-xdev', '-type', 'f', '-printf', '%A@ %T@ %b\n']);
  const files = listing
    .split('\n')
    .map((line) => line.split(' ').map(Number))
    .filter((f) => f.length === 3 && f.every(Number.isFinite))
    .map(([atime, mtime, blocks]) => ({ time: Math.max(atime, mtime), bytes: blocks * 512 }))
    .sort((a, b) => b.time - a.time);
  let kept = 0;
  let cutoff: number | undefined;
  let removed = 0;
  for (const file of files) {
    if (cutoff === undefined && kept + file.bytes > quotaBytes) cutoff = file.time;
    if (cutoff === undefined) kept += file.bytes;
    else removed += file.bytes;
  }
  if (cutoff === undefined) return 0;
  // Rounded up: the listing's times carry more digits than a double.
  const at = `@${(cutoff + 1e-6).toFixed(6)}`;
  await fileTool('find', [dir, '-xdev', '-type', 'f', '!', '-newerat', at, '!', '-newermt', at, '-delete']);
  return removed;
}
