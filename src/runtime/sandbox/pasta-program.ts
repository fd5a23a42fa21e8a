// Which pasta (the network helper of each run, network.ts) runs use: SANDBOX_PASTA, else the pinned build of
// tools/obtain-passt.sh (a newer passt than Debian bookworm's, with our patches: it starts a run's network in
// ~10 ms instead of ~37 and costs ~30 ms less CPU per run), else the system's. As root the build goes to
// /usr/local/lib/tarmac, since run uids execute it and root's home is closed to them; otherwise to the tools
// cache (TARMAC_CACHE_DIR).
import fs from 'node:fs';
import path from 'node:path';
import type { SandboxConfig } from '../../config/sandbox';
import { findTool } from '../process/confine';
import { canSwitchUids } from './isolation';

/** The pinned build's name: keep in step with BUILD in tools/obtain-passt.sh (passt's version and our patches'). */
export const PASST_BUILD = '2025_05_03.587980c-tarmac1';
const SYSTEM_BUILD_DIR = '/usr/local/lib/tarmac';

/**
 * The pinned build's path for a worker of this user (it may not exist): a worker that runs pasta as run uids
 * (root, or the capabilities to switch) takes the system directory's; a rootless one, pasta as itself, its cache's.
 */
export function pinnedPastaPath(toolsCacheDir: string): string {
  const switchesUids = process.geteuid?.() === 0 || canSwitchUids();
  return path.join(switchesUids ? SYSTEM_BUILD_DIR : toolsCacheDir, `passt-${PASST_BUILD}`, 'pasta');
}

/**
 * The pasta to run, or undefined when there is none. An explicit SANDBOX_PASTA is answered as given (the
 * sandbox refuses it when another user could replace it); the pinned build only when no one could.
 */
export function pastaProgram(config: Pick<SandboxConfig, 'pasta' | 'toolsCacheDir'>): string | undefined {
  if (config.pasta) return config.pasta;
  const pinned = pinnedPastaPath(config.toolsCacheDir);
  return fs.existsSync(pinned) && replaceableBy(pinned) === undefined ? pinned : findTool('pasta');
}

/**
 * Who other than root and this process's user could replace `file` (it, its link's target, or a directory
 * above either, owned by someone else or writable by group or others), or undefined when no one could. A
 * replaced pasta would run as a run's uid outside its sandbox.
 */
export function replaceableBy(file: string): string | undefined {
  const me = process.geteuid?.() ?? 0;
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    return `${file} does not exist`;
  }
  for (const start of new Set([path.resolve(file), real])) {
    for (let p = start; ; p = path.dirname(p)) {
      const st = fs.lstatSync(p);
      if (!st.isSymbolicLink()) {
        if (st.uid !== 0 && st.uid !== me) return `${p} belongs to uid ${st.uid}`;
        if (st.mode & 0o022 && !(st.isDirectory() && st.mode & 0o1000 && p !== start))
          return `${p} is writable by its group or others`;
      }
      if (p === path.dirname(p)) break;
    }
  }
  return undefined;
}
