// The contract between a deployment and the runs that use it: a successful deployment writes
// <build_path>/manifest.json; a run reads it to know what to execute. Build directories are immutable.
import fs from 'node:fs/promises';
import path from 'node:path';
import { readUntrustedFile } from './untrusted-file';

export interface BuildManifest {
  version: 1;
  runtime: 'python3' | 'nodejs';
  /** Absolute directory the code runs in (the directory of the config file inside the source). */
  workDir: string;
  /** Interpreter: `<build>/venv/bin/python` for python3, the `node` binary for nodejs. */
  interpreter: string;
  /** Main file relative to workDir (`run.main_file`); for tools the tool file. */
  mainFile: string;
  /** python3 only: run as `python -m <module>` (config `run.run_as_module`). */
  runAsModule?: boolean;
  /** Functions only: the function of mainFile a run calls (config `run.handler`, default `handler`). */
  handler?: string;
  /** Tools only (config `run.init_tool_file` / `run.init_tool_function`). */
  tool?: { initToolFile: string; initToolFunction: string };
}

export const MANIFEST_FILE = 'manifest.json';
const MAX_MANIFEST_BYTES = 64 * 1024;

export async function writeManifest(buildPath: string, manifest: BuildManifest): Promise<void> {
  // The build's own steps could have left a link here (to a file of the platform's): replace, never follow.
  const file = path.join(buildPath, MANIFEST_FILE);
  await fs.rm(file, { force: true, recursive: true });
  await fs.writeFile(file, JSON.stringify(manifest, null, 2), { flag: 'wx' });
}

/** The manifest is the platform's, but it lives in a directory a build wrote: read as an untrusted file. */
export async function readManifest(buildPath: string): Promise<BuildManifest> {
  const text = (await readUntrustedFile(buildPath, MANIFEST_FILE, { maxBytes: MAX_MANIFEST_BYTES })).toString('utf8');
  const parsed = JSON.parse(text) as BuildManifest;
  if (parsed.version !== 1) throw new Error(`unsupported build manifest version ${String(parsed.version)}`);
  return parsed;
}

/** The command that runs a structure's main file with `args` as argv (no shell). */
export function mainCommand(m: BuildManifest, args: string[]): { file: string; argv: string[]; cwd: string } {
  if (m.runtime === 'python3' && m.runAsModule) {
    const module = m.mainFile.replace(/\.py$/, '').split(path.sep).join('.');
    return { file: m.interpreter, argv: ['-m', module, ...args], cwd: m.workDir };
  }
  return { file: m.interpreter, argv: [m.mainFile, ...args], cwd: m.workDir };
}

/**
 * The command of a function run: the runtime's shim (written into the run's HOME) loads the main file and
 * calls its handler with the event in `input`; the result (or `{error}`) is written to the fd `result`.
 */
export function functionCommand(
  m: BuildManifest,
  files: { shim: string; input: string; result: number },
): { file: string; argv: string[]; cwd: string } {
  return {
    file: m.interpreter,
    argv: [files.shim, m.mainFile, m.handler ?? 'handler', files.input, String(files.result)],
    cwd: m.workDir,
  };
}

/**
 * The command of a tool run: the runtime's tool shim (in the run's HOME) loads `tool.initToolFile`, calls
 * `tool.initToolFunction()` and either describes the tool or runs one activity with the params in `params`;
 * the result goes to the fd `result`.
 */
export function toolCommand(
  m: BuildManifest,
  files: { shim: string; result: number; params: string },
  call: { describe: true } | { activity: string },
): { file: string; argv: string[]; cwd: string } {
  const init = m.tool ?? { initToolFile: m.mainFile, initToolFunction: 'init_tool' };
  const mode = 'activity' in call ? ['run', call.activity, files.params] : ['describe'];
  return {
    file: m.interpreter,
    argv: [files.shim, init.initToolFile, init.initToolFunction, String(files.result), ...mode],
    cwd: m.workDir,
  };
}
