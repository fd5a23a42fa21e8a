import { ApiKey } from './api-key';
import { Assistant, AssistantRun } from './assistant';
import { Asset, Bucket } from './bucket';
import { BillingCustomer, BillingEvent } from './billing';
import { CodeResource } from './code-resource';
import { Connection } from './connection';
import { Rule, Ruleset, RulesetRule, Thread, ThreadMessage } from './conversation';
import { DataConnector, DataJob } from './data-connector';
import { Deployment } from './deployment';
import { Integration, IntegrationDelivery } from './integration';
import { Invite } from './invite';
import { KnowledgeBase, KnowledgeBaseJob, KnowledgeBaseQuery } from './knowledge-base';
import { Organization } from './organization';
import { KnowledgeBaseSearch, Retriever, RetrieverQuery, StandaloneRetrieverComponent } from './retrieval';
import { Run, RunEvent } from './run';
import { RunSchedule } from './run-schedule';
import { Secret } from './secret';
import { Membership, PasswordReset, User, UserSession } from './user';
import { Waitpoint } from './waitpoint';

export {
  Waitpoint,
  ApiKey,
  Assistant,
  AssistantRun,
  Rule,
  Ruleset,
  RulesetRule,
  Thread,
  ThreadMessage,
  Asset,
  BillingCustomer,
  BillingEvent,
  Bucket,
  CodeResource,
  Connection,
  DataConnector,
  DataJob,
  Deployment,
  Integration,
  IntegrationDelivery,
  Invite,
  KnowledgeBase,
  KnowledgeBaseJob,
  KnowledgeBaseQuery,
  KnowledgeBaseSearch,
  Membership,
  Organization,
  PasswordReset,
  Retriever,
  RetrieverQuery,
  StandaloneRetrieverComponent,
  Run,
  RunEvent,
  RunSchedule,
  Secret,
  User,
  UserSession,
};

/** Every entity the data source knows; add new ones here. */
export const entities = [
  Organization,
  User,
  Membership,
  UserSession,
  PasswordReset,
  ApiKey,
  Secret,
  Invite,
  Bucket,
  Asset,
  CodeResource,
  Deployment,
  Run,
  RunEvent,
  Rule,
  Ruleset,
  RulesetRule,
  Thread,
  ThreadMessage,
  Assistant,
  AssistantRun,
  KnowledgeBase,
  KnowledgeBaseJob,
  KnowledgeBaseQuery,
  Connection,
  BillingCustomer,
  BillingEvent,
  Integration,
  IntegrationDelivery,
  DataConnector,
  DataJob,
  KnowledgeBaseSearch,
  Retriever,
  RetrieverQuery,
  RunSchedule,
  StandaloneRetrieverComponent,
  Waitpoint,
];
