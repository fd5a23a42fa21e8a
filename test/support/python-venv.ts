// Python tools for tests (schemathesis, griptape, ...): one virtualenv per set of requirements, made once
// with the machine's python3 and cached outside the repository, in $TARMAC_CACHE_DIR/venvs (default
// ~/.cache/tarmac/venvs), named `<name>-<hash of python version and requirements>`. A missing python3 is an
// error, never a skipped test: a suite that silently ran nothing would look green.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** Written last: a venv without it is half-made (an interrupted install) and is made again. */
const COMPLETE = '.tarmac-complete';
/** A lock older than this belongs to a process that died while installing. */
const STALE_LOCK_MS = 15 * 60_000;

/** The path of the venv's python, with `requirements` (pip specifiers) installed. Idempotent; safe across processes. */
export async function pythonVenv(name: string, requirements: string[]): Promise<string> {
  let version: string;
  try {
    version = (await run('python3', ['-c', 'import sys; print(sys.version)'])).stdout.trim();
  } catch (err) {
    throw new Error(`python3 is required for the ${name} tests but could not be run (${(err as Error).message}); install Python 3.9+`);
  }
  const hash = createHash('sha256').update(JSON.stringify({ version, requirements: [...requirements].sort() })).digest('hex').slice(0, 12);
  const root = path.join(process.env.TARMAC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'tarmac'), 'venvs');
  const dir = path.join(root, `${name}-${hash}`);
  const python = path.join(dir, 'bin', 'python');
  if (fs.existsSync(path.join(dir, COMPLETE))) return python;

  fs.mkdirSync(root, { recursive: true });
  const lock = `${dir}.lock`;
  await acquire(lock);
  try {
    if (fs.existsSync(path.join(dir, COMPLETE))) return python; // made by another process meanwhile
    fs.rmSync(dir, { recursive: true, force: true });
    const step = async (file: string, args: string[]) => {
      try {
        await run(file, args, { maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 });
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; message: string };
        throw new Error(`making the ${name} venv failed: ${file} ${args.join(' ')}\n${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
      }
    };
    await step('python3', ['-m', 'venv', dir]);
    await step(python, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '-q', ...requirements]);
    fs.writeFileSync(path.join(dir, COMPLETE), `${JSON.stringify({ version, requirements })}\n`);
    return python;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** mkdir is atomic: the process that made the directory holds the lock. */
async function acquire(lock: string): Promise<void> {
  for (;;) {
    try {
      fs.mkdirSync(lock);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) fs.rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
