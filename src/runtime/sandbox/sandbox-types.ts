// The shapes of the sandbox's interface (sandbox.ts): who a sandboxed process runs as, what it is given, and
// what the caller spawns.
import type { ExitStatus } from '../process/user-process';
import type { RunGroup } from './cgroups';

/** Who a sandboxed process runs as; `release()` once its processes are done (kills any left). */
export interface SandboxIdentity {
  uid: number;
  gid: number;
  /** The run's (or build's) control group; release() kills what is left in it and removes it. */
  group: RunGroup;
  /**
   * Removes the group (killing what is left in it) and frees the uid once /proc shows no process of it.
   * `batched`: the caller does not wait, so that check may wait a few seconds to serve many releases at once
   * (the group, which held every process of the run, is already empty by then). Idempotent.
   */
  release(opts?: { batched?: boolean }): Promise<void>;
}

export interface SandboxSpec {
  file: string;
  argv: string[];
  cwd: string;
  /** HOME and TMPDIR of the process: a private tmpfs mounted at this path. */
  home: string;
  /** Host paths visible at the same path, read-only (a run's build, its input files). */
  readOnly?: string[];
  /** Host paths visible at the same path, writable (a build in progress, a result file, a download cache). */
  writable?: string[];
  memoryBytes: number;
  /** Undefined only with SANDBOX=off. */
  identity: SandboxIdentity | undefined;
}

/** What to spawn: `file argv`, with `extraFiles` opened read-only as the child's fds 3, 4, ... */
export interface Wrapped {
  file: string;
  argv: string[];
  extraFiles: string[];
  /**
   * Sandboxed: the program's environment reaches bubblewrap as arguments on this fd, and the steps before it
   * get a fixed one (src/runtime/process/env-channel.ts). Undefined with SANDBOX=off.
   */
  envArgsFd?: number;
  /** How the spawned process ended, as the user's program ended (bubblewrap reports a signal as 128 + N). */
  readExit(status: ExitStatus): ExitStatus;
}

export class SandboxUnavailable extends Error {}
