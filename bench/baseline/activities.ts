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

/** A function call: `<interpreter> <shim> <main_file> <handler> <input> <result>`, like our function runs. */
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

function run(file: string, argv: string[], cwd: string): Promise<BareRunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let spawnedAt = 0;
    child.once('spawn', () => (spawnedAt = Date.now()));
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', reject);
    child.once('close', (code) => resolve({ spawnedAt, exitedAt: Date.now(), exitCode: code }));
  });
}

export function createBareActivities() {
  return {
    async spawnProgram(command: BareCommand): Promise<BareRunResult> {
      return run(command.file, command.argv, command.cwd);
    },

    async spawnFunction(call: BareFunctionCall): Promise<unknown> {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-bare-fn-'));
      try {
        for (const f of call.shim) await fs.writeFile(path.join(dir, f.fileName), f.source);
        const shim = path.join(dir, call.shim[0].fileName);
        const input = path.join(dir, 'input.json');
        const result = path.join(dir, 'result.json');
        await fs.writeFile(input, JSON.stringify(call.input));
        const { exitCode } = await run(call.interpreter, [shim, call.mainFile, call.handler, input, result], call.cwd);
        if (exitCode !== 0) throw new Error(`function exited with ${exitCode}`);
        return JSON.parse(await fs.readFile(result, 'utf8'));
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };
}

export type BareActivities = ReturnType<typeof createBareActivities>;
