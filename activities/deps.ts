// What every activity is given (activityDepsFor in src/worker/create-worker.ts builds it, once per worker).
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../src/blobs/blob-store';
import type { Config } from '../src/config';
import type { ModelDriver } from '../src/drivers/model/types';
import type { Logger } from '../src/logger';
import type { RunUpdatesHub } from '../src/persistence/run-updates-hub';
import type { LocalBuilds } from '../src/runtime/build/local-builds';
import type { Sandbox } from '../src/runtime/sandbox/sandbox';
import type { SecretBox } from '../src/security/secret-box';

export interface ActivityDeps {
  ds: DataSource;
  config: Config;
  blobs: BlobStore;
  box: SecretBox;
  log: Logger;
  /** For activities that look at other workflows (the reconciler). */
  temporal: Client;
  /** Model calls of assistant runs and chat messages (createModelDriver(config.models)). */
  models: ModelDriver;
  /** This worker's local build cache: builds published by their builder, fetched by the workers that run them. */
  builds: LocalBuilds;
  /** The one path by which user code runs (Sandbox.open at worker start). */
  sandbox: Sandbox;
  /** The worker's LISTEN connection: activities that wait for runs wake on their updates (src/jobs/await-end.ts). */
  runUpdates?: RunUpdatesHub;
}
