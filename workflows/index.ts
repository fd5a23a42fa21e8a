// Every workflow type the worker registers (src/temporal/contracts.ts names them). Workflows import values
// only from @temporalio/workflow, this folder and the contracts (npm run lint).
export { deploymentWorkflow } from './deployment';
export { inviteWorkflow } from './invite';
export { reconcilerWorkflow } from './reconciler';
export { buildCleanupWorkflow, buildRemovalWorkflow } from './build-cleanup';
export { codeRunWorkflow, structureRunWorkflow } from './code-run';
export { assistantRunWorkflow } from './assistant-run';
export { chatMessageWorkflow } from './chat-message';
export { knowledgeBaseJobWorkflow } from './knowledge-base-job';
export { knowledgeBaseQueryWorkflow } from './knowledge-base-query';
export { integrationDeliveryWorkflow } from './integration-delivery';
export { dataJobWorkflow } from './data-job';
export { scheduledJobWorkflow } from './scheduled-job';
export { scheduledRunWorkflow } from './scheduled-run';
export { knowledgeBaseSearchWorkflow } from './knowledge-base-search';
export { retrieverQueryWorkflow } from './retriever-query';
