// Activities do all I/O. Built by a factory that receives their dependencies (samples-typescript style).
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../src/blobs/blob-store';
import type { Config } from '../src/config';
import type { ModelDriver } from '../src/drivers/model/types';
import type { Logger } from '../src/logger';
import type { Sandbox } from '../src/runtime/sandbox/sandbox';
import type { SecretBox } from '../src/security/secret-box';
import { createAssistantRunActivities } from './assistant-runs';
import { createBuildCleanupActivities } from './build-cleanup';
import { createChatMessageActivities } from './chat-messages';
import { createDeploymentActivities } from './deployments';
import { createInviteActivities } from './invites';
import { createReconcilerActivities } from './reconciler';
import { createCodeRunActivities } from './code-runs';

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
  /** The one path by which user code runs (Sandbox.open at worker start). */
  sandbox: Sandbox;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createInviteActivities(deps),
    ...createDeploymentActivities(deps),
    ...createCodeRunActivities(deps),
    ...createAssistantRunActivities(deps),
    ...createChatMessageActivities(deps),
    ...createReconcilerActivities(deps),
    ...createBuildCleanupActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
