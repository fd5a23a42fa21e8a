import { Foundation1763800000000 } from './1763800000000-foundation';
import { CodePlatform1763900000000 } from './1763900000000-code-platform';
import { DeploymentSource1764000000000 } from './1764000000000-deployment-source';
import { RunCredentialsIndex1764100000000 } from './1764100000000-run-credentials-index';
import { Assistants1764200000000 } from './1764200000000-assistants';
import { RunSpans1764300000000 } from './1764300000000-run-spans';
import { DefaultBuckets1764400000000 } from './1764400000000-default-buckets';
import { SandboxGroups1764500000000 } from './1764500000000-sandbox-groups';
import { Vector1764600000000 } from './1764600000000-vector';
import { KnowledgeBases1764700000000 } from './1764700000000-knowledge-bases';
import { KnowledgeBaseRetrieval1764800000000 } from './1764800000000-knowledge-base-retrieval';
import { DataConnectors1764820000000 } from './1764820000000-data-connectors';
import { Integrations1764840000000 } from './1764840000000-integrations';
import { ApiKeyNotify1764900000000 } from './1764900000000-api-key-notify';
import { RunExecutionClaim1764920000000 } from './1764920000000-run-execution-claim';
import { ConnectionsBilling1764850000000 } from './1764850000000-connections-billing';
import { ExecutionSlots1764950000000 } from './1764950000000-execution-slots';
import { RateLimits1765000000000 } from './1765000000000-rate-limits';
import { RunReplays1765010000000 } from './1765010000000-run-replays';
import { IdempotencyKeys1765100000000 } from './1765100000000-idempotency-keys';
import { RunSchedules1765400000000 } from './1765400000000-run-schedules';
import { FullTextBm251765500000000 } from './1765500000000-full-text-bm25';
import { Concurrency1765200000000 } from './1765200000000-concurrency';
import { RetrieverComponents1765700000000 } from './1765700000000-retriever-components';
import { RunRetries1765300000000 } from './1765300000000-run-retries';
import { AssistantRunControl1765800000000 } from './1765800000000-assistant-run-control';
import { RunChanges1765900000000 } from './1765900000000-run-changes';
import { RunLimits1766700000000 } from './1766700000000-run-limits';
import { SlotPlaces1766800000000 } from './1766800000000-slot-places';
import { RunExecutionEnding1766900000000 } from './1766900000000-run-execution-ending';
import { BuildArtifacts1767000000000 } from './1767000000000-build-artifacts';
import { People1767140000000 } from './1767140000000-people';
import { InviteLinks1767150000000 } from './1767150000000-invite-links';
import { AuditEvents1767160000000 } from './1767160000000-audit-events';
import { InviteMail1767170000000 } from './1767170000000-invite-mail';
import { Roles1767180000000 } from './1767180000000-roles';
import { UserIdentities1767190000000 } from './1767190000000-user-identities';
import { Waitpoints1767200000000 } from './1767200000000-waitpoints';
import { WaitpointTokens1767210000000 } from './1767210000000-waitpoint-tokens';
import { ApprovalWebhooks1767220000000 } from './1767220000000-approval-webhooks';

/** Every migration, in order; the data source runs these (never `synchronize`). */
export const migrations = [
  Foundation1763800000000,
  CodePlatform1763900000000,
  DeploymentSource1764000000000,
  RunCredentialsIndex1764100000000,
  Assistants1764200000000,
  RunSpans1764300000000,
  DefaultBuckets1764400000000,
  SandboxGroups1764500000000,
  Vector1764600000000,
  KnowledgeBases1764700000000,
  KnowledgeBaseRetrieval1764800000000,
  DataConnectors1764820000000,
  Integrations1764840000000,
  ConnectionsBilling1764850000000,
  ApiKeyNotify1764900000000,
  RunExecutionClaim1764920000000,
  ExecutionSlots1764950000000,
  RateLimits1765000000000,
  RunReplays1765010000000,
  IdempotencyKeys1765100000000,
  RunSchedules1765400000000,
  FullTextBm251765500000000,
  Concurrency1765200000000,
  RetrieverComponents1765700000000,
  RunRetries1765300000000,
  AssistantRunControl1765800000000,
  RunChanges1765900000000,
  RunLimits1766700000000,
  SlotPlaces1766800000000,
  RunExecutionEnding1766900000000,
  BuildArtifacts1767000000000,
  People1767140000000,
  InviteLinks1767150000000,
  AuditEvents1767160000000,
  InviteMail1767170000000,
  Roles1767180000000,
  UserIdentities1767190000000,
  Waitpoints1767200000000,
  WaitpointTokens1767210000000,
  ApprovalWebhooks1767220000000,
];
