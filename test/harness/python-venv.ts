// Python virtualenvs for test tools that must run the real Python clients (the compat suite, fuzzers).
// One venv per set of requirements, cached outside the repository under
// $TARMAC_CACHE_DIR/venvs/<name>-<hash of the requirements and the interpreter>, so a clean clone pays the
// install once per machine. A machine without Python fails here, loudly: these tests never skip silently.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

interface Interpreter {
  path: string;
  version: [number, number];
}

/** Newest clients want Python ≥ 3.12; older interpreters get `--ignore-requires-python`. */
const WANTED: [number, number] = [3, 12];

async function probe(candidate: string): Promise<Interpreter | undefined> {
  try {
    const { stdout } = await run(
      candidate,
      ['-c', 'import sys; print(sys.executable); print("%d.%d" % sys.version_info[:2])'],
      { timeout: 20_000 },
    );
    const [exe, version] = stdout.trim().split('\n');
    const [major, minor] = version.split('.').map(Number);
    return { path: exe, version: [major, minor] };
  } catch {
    return undefined;
  }
}

const atLeast = (v: [number, number], w: [number, number]) => v[0] > w[0] || (v[0] === w[0] && v[1] >= w[1]);

/** TARMAC_PYTHON, else python3.12 on PATH or installed by pyenv (not necessarily active), else python3. */
async function findInterpreter(): Promise<Interpreter> {
  if (process.env.TARMAC_PYTHON) {
    const chosen = await probe(process.env.TARMAC_PYTHON);
    if (!chosen) throw new Error(`TARMAC_PYTHON=${process.env.TARMAC_PYTHON} does not run`);
    return chosen;
  }
  const pyenvRoot = process.env.PYENV_ROOT ?? path.join(os.homedir(), '.pyenv');
  const pyenvVersions = fs.existsSync(path.join(pyenvRoot, 'versions'))
    ? fs
        .readdirSync(path.join(pyenvRoot, 'versions'))
        .filter((v) => /^3\.12(\.|$)/.test(v))
        .sort()
        .reverse()
        .map((v) => path.join(pyenvRoot, 'versions', v, 'bin', 'python3'))
    : [];
  for (const candidate of ['python3.12', ...pyenvVersions]) {
    const found = await probe(candidate);
    if (found && atLeast(found.version, WANTED)) return found;
  }
  const fallback = await probe('python3');
  if (!fallback) {
    throw new Error(
      'python3 was not found: the compat suite needs Python 3 (3.12 preferred; set TARMAC_PYTHON to choose one)',
    );
  }
  return fallback;
}

function cacheRoot(): string {
  return path.resolve(process.env.TARMAC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'tarmac'), 'venvs');
}

const building = new Map<string, Promise<string>>();

/**
 * The python of a venv named `name` with `requirements` (pip requirement specifiers) installed. Idempotent:
 * a venv is complete once its marker file exists, so an interrupted install is redone next time.
 */
export function pythonVenv(name: string, requirements: string[]): Promise<string> {
  const key = `${name}\n${requirements.join('\n')}`;
  let pending = building.get(key);
  if (!pending) {
    pending = createVenv(name, requirements);
    building.set(key, pending);
    pending.catch(() => building.delete(key));
  }
  return pending;
}

async function createVenv(name: string, requirements: string[]): Promise<string> {
  const interpreter = await findInterpreter();
  const hash = crypto
    .createHash('sha256')
    .update(JSON.stringify({ requirements: [...requirements].sort(), python: interpreter.version }))
    .digest('hex')
    .slice(0, 12);
  const dir = path.join(cacheRoot(), `${name}-${hash}`);
  const python = path.join(dir, 'bin', 'python');
  const marker = path.join(dir, '.complete');
  if (fs.existsSync(marker)) return python;

  // Built beside and renamed into place, so a concurrent or interrupted build never leaves a half venv at
  // `dir`. Only `python -m <tool>` is used: scripts in bin/ carry the build path in their shebang.
  const staging = `${dir}.building-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const step = async (file: string, args: string[]) => {
    try {
      await run(file, args, { timeout: 900_000, maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(
        `${path.basename(file)} ${args.join(' ')} failed: ${e.message}\n${(e.stdout ?? '').slice(-4000)}${(e.stderr ?? '').slice(-4000)}`,
      );
    }
  };
  const stagingPython = path.join(staging, 'bin', 'python');
  try {
    await step(interpreter.path, ['-m', 'venv', staging]);
    const relax = atLeast(interpreter.version, WANTED) ? [] : ['--ignore-requires-python'];
    await step(stagingPython, [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      ...relax,
      ...requirements,
    ]);
    fs.writeFileSync(
      path.join(staging, '.complete'),
      `${interpreter.path} ${interpreter.version.join('.')}\n${requirements.join('\n')}\n`,
    );
    if (fs.existsSync(marker)) {
      fs.rmSync(staging, { recursive: true, force: true }); // another process finished the same venv first
      return python;
    }
    fs.rmSync(dir, { recursive: true, force: true }); // an incomplete one of older code
    fs.renameSync(staging, dir);
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    if (fs.existsSync(marker)) return python; // another process finished the same venv first
    throw err;
  }
  return python;
}
