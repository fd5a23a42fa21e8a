import type { WorkflowStartOptions } from '@temporalio/client';
import { ORGANIZATION_ID, RESOURCE_ID, RESOURCE_KIND } from './search-attributes';

/** The kinds of resource that run as workflows; each has one workflow type and an id prefix. */
export type ResourceKind =
  | 'invite'
  | 'deployment'
  | 'structure-run'
  | 'function-run'
  | 'tool-run'
  | 'assistant-run'
  | 'chat-run'
  | 'knowledge-base-job'
  | 'knowledge-base-query'
  | 'integration-delivery'
  | 'data-job'
  | 'knowledge-base-search'
  | 'retriever-query';

export interface WorkflowResource {
  kind: ResourceKind;
  id: string;
  organizationId: string;
  /** Shown as the workflow's summary in the Temporal UI. */
  summary: string;
}

/** Workflow id derived from the resource: `invite-<uuid>`, `structure-run-<uuid>`. One workflow per resource, ever. */
export const workflowIdOf = (kind: ResourceKind, id: string) => `${kind}-${id}`;

/**
 * Start options shared by every resource workflow: derived id, search attributes, memo and summary.
 * USE_EXISTING makes a retried start return the running workflow instead of failing or duplicating;
 * REJECT_DUPLICATE keeps a closed workflow's id from being reused by another resource.
 */
export function startOptionsFor(resource: WorkflowResource, taskQueue: string) {
  return {
    taskQueue,
    workflowId: workflowIdOf(resource.kind, resource.id),
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: RESOURCE_ID, value: resource.id },
      { key: ORGANIZATION_ID, value: resource.organizationId },
      { key: RESOURCE_KIND, value: resource.kind },
    ],
    memo: { resource_kind: resource.kind, resource_id: resource.id, organization_id: resource.organizationId },
    staticSummary: resource.summary,
  } satisfies Partial<WorkflowStartOptions>;
}
