// What the supervisor has started so far. The start sequence records each service here the moment it
// exists, so that a shutdown at any moment (Ctrl-C, a crash, a failed step) stops exactly what runs.
import type { RunningPostgres } from '../postgres/embedded-postgres';
import type { Child } from './children';
import type { FirstStart } from './database-setup';

export interface Running {
  postgres?: RunningPostgres;
  temporal?: Child;
  /** The SDK-managed dev server (no Temporal CLI cached and no Go to build one). */
  temporalEnv?: { teardown(): Promise<void> };
  api?: Child;
  worker?: Child;
  /** The local embedding server (src/embeddings), when no other embedding model is configured. */
  embeddings?: Child;
}

/** How the start sequence tells the supervisor what it needs for the shutdown, and asks whether one began. */
export interface StartHooks {
  isStopping(): boolean;
  setFirstStart(first: FirstStart): void;
  setReady(): void;
}

/** Thrown to abandon the start sequence once a shutdown has begun. */
export class Stopped extends Error {}
