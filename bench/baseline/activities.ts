// Activities of the two baselines. Bare: spawn the same interpreter with the same files and arguments as our
// runs do (no shell, output read and dropped), and nothing else. Isolated bare: the same program through the
// same sandbox chain as our runs (a leased uid and its control group, setpriv, the network launcher with pasta,
// prlimit, bubblewrap with its mounts and seccomp, the firewall), spawned the same way (the spawner), and
// still nothing else: no database, status writes, events, logs, credentials or heartbeats.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RESULT_FD as RUN_RESULT_FD } from '../../src/runtime/process/result-channel';
import { startUserProcess } from '../../src/runtime/process/user-process';
import type { Sandbox } from '../../src/runtime/sandbox/sandbox';

export interface BareCommand {
  file: string;
  argv: string[];
  cwd: string;
  /** The build directory (the isolated baseline binds it read-only, as a run's). */
  buildPath: string;
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
  buildPath: string;
  input: unknown;
}

/** What the isolated baseline needs besides the command: the run's organization group and its memory limit. */
export interface IsolatedPlacement {
  gid: number;
  memoryBytes: number;
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

/**
 * `file argv` in the sandbox as a run of ours is (Sandbox.identity → wrap → startUserProcess → release, the steps of
 * executeCodeRun in activities/code-runs.ts), its HOME a fresh directory holding `inputs` (bound read-only).
 */
async function runIsolated(
  sandbox: Sandbox,
  placement: IsolatedPlacement,
  command: { file: string; argv: (home: string) => string[]; cwd: string; buildPath: string },
  inputs: Array<{ fileName: string; source: string }>,
  wantsResult: boolean,
): Promise<BareRunResult & { result?: string }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-isolated-'));
  await fs.chmod(home, 0o711);
  const [, identity] = await Promise.all([
    Promise.all(inputs.map((f) => fs.writeFile(path.join(home, f.fileName), f.source, { mode: 0o644 }))),
    sandbox.identity(placement.gid, placement.memoryBytes),
  ]);
  try {
    const argv = command.argv(home);
    const wrapped = sandbox.wrap({
      file: command.file,
      argv,
      cwd: command.cwd,
      home,
      identity,
      memoryBytes: placement.memoryBytes,
      readOnly: [command.buildPath, ...inputs.map((f) => path.join(home, f.fileName))],
    });
    const proc = await startUserProcess({
      file: wrapped.file,
      argv: wrapped.argv,
      cwd: command.cwd,
      env: { ...ENV, HOME: home },
      extraFiles: wrapped.extraFiles,
      envArgsFd: wrapped.envArgsFd,
      readExit: wrapped.readExit,
      ...(wantsResult ? { result: { limitBytes: 1 << 20 } } : {}),
      onLine: () => undefined,
    });
    const spawnedAt = Date.now();
    const status = await proc.finished;
    const bytes = await proc.result;
    const result = bytes && 'bytes' in bytes ? bytes.bytes.toString('utf8') : undefined;
    return { spawnedAt, exitedAt: Date.now(), exitCode: status.code, result };
  } finally {
    // As a run's: the uid's sweep batched and not awaited, HOME removed meanwhile.
    void identity?.release({ batched: true }).catch(() => undefined);
    void fs.rm(home, { recursive: true, force: true }).catch(() => undefined);
  }
}

export function createBareActivities(isolation?: { sandbox: Sandbox; placement: IsolatedPlacement }) {
  const isolated = () => {
    if (!isolation) throw new Error('the isolated baseline needs SANDBOX=on');
    return isolation;
  };
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

    async spawnIsolatedProgram(command: BareCommand): Promise<BareRunResult> {
      const { sandbox, placement } = isolated();
      const { spawnedAt, exitedAt, exitCode } = await runIsolated(
        sandbox,
        placement,
        { ...command, argv: () => command.argv },
        [],
        false,
      );
      return { spawnedAt, exitedAt, exitCode };
    },

    async spawnIsolatedFunction(call: BareFunctionCall): Promise<unknown> {
      const { sandbox, placement } = isolated();
      const [shim, ...companions] = call.shim;
      const inputs = [...companions, shim, { fileName: 'function-input.json', source: JSON.stringify(call.input) }];
      const { exitCode, result } = await runIsolated(
        sandbox,
        placement,
        {
          file: call.interpreter,
          argv: (home) => [
            path.join(home, shim.fileName),
            call.mainFile,
            call.handler,
            path.join(home, 'function-input.json'),
            String(RUN_RESULT_FD),
          ],
          cwd: call.cwd,
          buildPath: call.buildPath,
        },
        inputs,
        true,
      );
      if (exitCode !== 0) throw new Error(`function exited with ${exitCode}`);
      return JSON.parse(result ?? 'null');
    },
  };
}

export type BareActivities = ReturnType<typeof createBareActivities>;
