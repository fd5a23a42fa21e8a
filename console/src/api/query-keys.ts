// The one place the console's cache keys are named (TanStack Query): a page reads with them and refreshes by
// them. A key begins with its resource; a shorter key stands for every longer one it begins (refreshing
// `runs.all` re-reads every list of runs). The live lists (console/src/live/use-live-runs.ts) find every cached
// list of runs by `runs.all` and read its filters from the key's second element.
import type { CodeKind } from './code-resources';
import type { QueuedKind, ScheduledKind } from './run-control';
import type { RunKind, RunsSearch } from './runs';

export const queryKeys = {
  /** The signed-in session: its user, organization and role. */
  session: ['session'] as const,
  /** How this installation signs people in (password, OIDC). */
  signInMethods: ['sign-in-methods'] as const,
  runs: {
    all: ['runs'] as const,
    list: (search: RunsSearch) => ['runs', search] as const,
    recent: (kind: RunKind, resourceId: string) => ['runs', { kind, resource_id: resourceId, recent: true }] as const,
  },
  run: (kind: RunKind, id: string) => ['run', kind, id] as const,
  /** Recorded when the run starts: read again at each status. */
  runLimits: (id: string, status: string | undefined) => ['run-limits', id, status] as const,
  runLogs: (kind: RunKind, id: string) => ['run-logs', kind, id] as const,

  structures: (page: number) => ['structures', page] as const,
  structure: (id: string) => ['structure', id] as const,
  structureDeployments: (id: string) => ['deployments', id] as const,
  codeResources: (kind: CodeKind, page: number) => [kind, 'list', page] as const,
  codeResource: (kind: CodeKind, id: string) => [kind, id] as const,
  codeDeployments: (kind: CodeKind, id: string) => [kind, id, 'deployments'] as const,
  toolDocument: (id: string) => ['tool', id, 'openapi'] as const,
  schedules: (kind: ScheduledKind, id: string) => [kind, id, 'schedules'] as const,
  queue: (kind: QueuedKind, id: string) => [kind, id, 'queue'] as const,

  assistants: (page: number) => ['assistants', page] as const,
  assistant: (id: string) => ['assistant', id] as const,
  threads: ['threads'] as const,
  threadMessages: {
    all: ['thread-messages'] as const,
    of: (threadId: string | undefined) => ['thread-messages', threadId] as const,
  },

  knowledgeBases: (page: number) => ['knowledge-bases', page] as const,
  knowledgeBase: (id: string) => ['knowledge-base', id] as const,
  knowledgeBaseJobs: (id: string) => ['knowledge-base-jobs', id] as const,
  dataConnectors: (page: number) => ['data-connectors', page] as const,
  dataConnector: (id: string) => ['data-connector', id] as const,
  dataJobs: (id: string) => ['data-jobs', id] as const,
  integrations: (page: number) => ['integrations', page] as const,
  integration: (id: string) => ['integration', id] as const,
  deliveries: (id: string, page: number) => ['deliveries', id, page] as const,
  buckets: (page: number) => ['buckets', page] as const,
  bucket: (id: string) => ['bucket', id] as const,
  assets: {
    of: (bucketId: string) => ['assets', bucketId] as const,
    page: (bucketId: string, page: number, prefix: string) => ['assets', bucketId, page, prefix] as const,
  },

  users: ['users'] as const,
  members: (organizationId: string) => ['members', organizationId] as const,
  invites: (organizationId: string) => ['invites', organizationId] as const,
  /** An organization's keys (its id), or a person's own (`user:<id>`). */
  apiKeys: (scope: string) => ['api-keys', scope] as const,
  secrets: ['secrets'] as const,
  /** The waitpoints that wait for someone. */
  waiting: ['waitpoints', 'WAITING'] as const,

  dashboard: {
    timeline: (windowIndex: number) => ['dash-timeline', windowIndex] as const,
    counts: (windowIndex: number) => ['dash-counts', windowIndex] as const,
    structures: (windowIndex: number) => ['dash-structures', windowIndex] as const,
    queues: ['dash-queues'] as const,
    failures: ['dash-failures'] as const,
  },
};
