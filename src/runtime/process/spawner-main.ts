// The spawner (see spawn.ts): a small child of the worker that starts processes on request and forwards
// their output and exits over the IPC channel. It holds no state of its own beyond the processes it started;
// when the worker goes (the channel closes), it kills each of their process groups and exits.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { CHAIN_ENV, sendEnv } from './env-channel';
import { collectResult, resultStreamOf, stdioWith } from './result-channel';

export type SpawnerRequest =
  | {
      type: 'spawn';
      id: number;
      file: string;
      argv: string[];
      cwd: string;
      env: Record<string, string>;
      envArgsFd?: number;
      extraFiles: string[];
      result?: { limitBytes: number };
    }
  /** Stop forwarding the output of `id` (its pipes are closed here). */
  | { type: 'abandon'; id: number };

export type SpawnerReply =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'failed'; id: number; message: string; code?: string }
  | { type: 'data'; id: number; stream: 'stdout' | 'stderr'; chunk: Uint8Array }
  | { type: 'end'; id: number; stream: 'stdout' | 'stderr' }
  | { type: 'exit'; id: number; code: number | null; signal: string | null }
  /** What arrived at RESULT_FD, collected here up to its limit (one message, at most the limit). */
  | { type: 'result'; id: number; bytes?: Uint8Array; tooLarge?: boolean };

const children = new Map<number, ChildProcess>();

function reply(m: SpawnerReply, then?: () => void) {
  if (process.connected) process.send!(m, undefined, {}, () => then?.());
}

function start(req: Extract<SpawnerRequest, { type: 'spawn' }>) {
  let child: ChildProcess;
  const fds: number[] = [];
  try {
    for (const f of req.extraFiles) fds.push(fs.openSync(f, 'r'));
    child = spawn(req.file, req.argv, {
      cwd: req.cwd,
      env: req.envArgsFd === undefined ? req.env : { ...CHAIN_ENV },
      detached: true,
      stdio: stdioWith(fds, Boolean(req.result), req.envArgsFd !== undefined),
      shell: false,
    });
  } catch (err) {
    return reply({ type: 'failed', id: req.id, message: (err as Error).message });
  } finally {
    fds.forEach((fd) => fs.closeSync(fd));
  }
  if (req.envArgsFd !== undefined) sendEnv(child, req.envArgsFd, req.env);
  child.once('error', (err: NodeJS.ErrnoException) => {
    if (!child.pid) reply({ type: 'failed', id: req.id, message: err.message, code: err.code });
  });
  child.once('spawn', () => {
    children.set(req.id, child);
    reply({ type: 'spawned', id: req.id, pid: child.pid! });
    if (req.result) {
      void collectResult(resultStreamOf(child)!, req.result.limitBytes).then((r) =>
        reply(
          'tooLarge' in r
            ? { type: 'result', id: req.id, tooLarge: true }
            : { type: 'result', id: req.id, bytes: r.bytes },
        ),
      );
    }
    for (const stream of ['stdout', 'stderr'] as const) {
      const s = child[stream]!;
      // One chunk in flight per stream: a worker that reads slowly slows the process, as a pipe would.
      s.on('data', (chunk: Buffer) => {
        s.pause();
        reply({ type: 'data', id: req.id, stream, chunk }, () => s.resume());
      });
      s.once('close', () => reply({ type: 'end', id: req.id, stream }));
    }
  });
  child.once('exit', (code, signal) => reply({ type: 'exit', id: req.id, code, signal }));
  // Kept (for the kill on disconnect) until its output is closed too: descendants may still run in its group.
  child.once('close', () => children.delete(req.id));
}

process.on('message', (m: SpawnerRequest) => {
  if (m.type === 'spawn') start(m);
  else if (m.type === 'abandon') {
    const child = children.get(m.id);
    child?.stdout?.destroy();
    child?.stderr?.destroy();
    (child && resultStreamOf(child))?.destroy();
  }
});

process.on('disconnect', () => {
  for (const child of children.values()) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  process.exit(0);
});
