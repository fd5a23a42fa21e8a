// Activities of the bare baseline: spawn the same interpreter with the same files and arguments as our
// runs do (no shell, output read and dropped), and nothing else.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface BareCommand {
  file: string;
  argv: string[];
  cwd: string;
}

export interface BareRunResult {
  /** Date.now() when the process was spawned (the bare counterpart of a run's started_at). */
  spawnedAt: number;
  /** Date.now() when it had exited and its output was read. */
  exitedAt: number;
  exitCode: number | null;
}

/** A function call: `<interpreter> <shim> <main_file> <handler> <input> <result_fd>`, like our function runs. */
export interface BareFunctionCall {
  interpreter: string;
  /** The shim to run first, then its companions (src/runtime/shims). */
  shim: Array<{ fileName: string; source: string }>;
  mainFile: string;
  handler: string;
  cwd: string;
  input: unknown;
}

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: os.tmpdir() };

/** The fd on which a function's shim writes its result, a pipe as in our runs. */
const RESULT_FD = 3;

function run(file: string, argv: string[], cwd: string): Promise<BareRunResult & { result: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    let spawnedAt = 0;
    let result = '';
    child.once('spawn', () => (spawnedAt = Date.now()));
    child.stdout!.resume();
    child.stderr!.resume();
    (child.stdio[RESULT_FD] as NodeJS.ReadableStream).setEncoding('utf8');
    (child.stdio[RESULT_FD] as NodeJS.ReadableStream).on('data', (chunk: string) => (result += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ spawnedAt, exitedAt: Date.now(), exitCode: code, result }));
  });
}

export function createBareActivities() {
  return {
    async spawnProgram(command: BareCommand): Promise<BareRunResult> {
      const { spawnedAt, exitedAt, exitCode } = await run(command.file, command.argv, command.cwd);
      return { spawnedAt, exitedAt, exitCode };
    },

    async spawnFunction(call: BareFunctionCall): Promise<unknown> {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-bare-fn-'));
      try {
        for (const f of call.shim) await fs.writeFile(path.join(dir, f.fileName), f.source);
        const shim = path.join(dir, call.shim[0].fileName);
        const input = path.join(dir, 'input.json');
        await fs.writeFile(input, JSON.stringify(call.input));
        const argv = [shim, call.mainFile, call.handler, input, String(RESULT_FD)];
        const { exitCode, result } = await run(call.interpreter, argv, call.cwd);
        if (exitCode !== 0) throw new Error(`function exited with ${exitCode}`);
        return JSON.parse(result);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };
}

export type BareActivities = ReturnType<typeof createBareActivities>;
