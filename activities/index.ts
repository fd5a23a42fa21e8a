// Activities do all I/O. Built by a factory that receives their dependencies (samples-typescript style).
import type { ActivityDeps } from './deps';
import { createAssistantRetrievalActivities } from './assistant-retrieval';
import { createAssistantRunActivities } from './assistant-runs';
import { createBuildCleanupActivities } from './build-cleanup';
import { createChatMessageActivities } from './chat-messages';
import { createDeploymentActivities } from './deployments';
import { createIntegrationActivities } from './integrations';
import { createInviteActivities } from './invites';
import { createKnowledgeBaseActivities } from './knowledge-bases';
import { createDataJobActivities } from './data-jobs';
import { createReconcilerActivities } from './reconciler';
import { createRetrievalActivities } from './retrieval';
import { createCodeRunActivities } from './code-runs';
import { createExecutionSlotActivities } from './execution-slots';
import { createScheduledRunActivities } from './scheduled-runs';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createInviteActivities(deps),
    ...createDeploymentActivities(deps),
    ...createCodeRunActivities(deps),
    ...createAssistantRunActivities(deps),
    ...createAssistantRetrievalActivities(deps),
    ...createChatMessageActivities(deps),
    ...createReconcilerActivities(deps),
    ...createBuildCleanupActivities(deps),
    ...createKnowledgeBaseActivities(deps),
    ...createIntegrationActivities(deps),
    ...createDataJobActivities(deps),
    ...createRetrievalActivities(deps),
    ...createExecutionSlotActivities(deps),
    ...createScheduledRunActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

export type { ActivityDeps } from './deps';
