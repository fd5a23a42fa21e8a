// Every workflow type the worker registers. Workflows import only @temporalio/workflow (and types).
export * from './deployment';
export { inviteWorkflow } from './invite';
export { reconcilerWorkflow } from './reconciler';
export { buildCleanupWorkflow } from './build-cleanup';
export * from './runs';
export * from './assistant-run';
export * from './chat-message';
