// Every workflow type the worker registers. Workflows import only @temporalio/workflow (and types).
export { inviteWorkflow } from './invite';
