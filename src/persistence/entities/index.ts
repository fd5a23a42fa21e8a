import { ApiKey } from './api-key';
import { Assistant, AssistantRun } from './assistant';
import { Asset, Bucket } from './bucket';
import { CodeResource } from './code-resource';
import { Rule, Ruleset, RulesetRule, Thread, ThreadMessage } from './conversation';
import { Deployment } from './deployment';
import { Invite } from './invite';
import { KnowledgeBase, KnowledgeBaseJob, KnowledgeBaseQuery } from './knowledge-base';
import { Organization } from './organization';
import { KnowledgeBaseSearch, Retriever, RetrieverQuery } from './retrieval';
import { Run, RunEvent } from './run';
import { Secret } from './secret';
import { Membership, User } from './user';

export {
  ApiKey,
  Assistant,
  AssistantRun,
  Rule,
  Ruleset,
  RulesetRule,
  Thread,
  ThreadMessage,
  Asset,
  Bucket,
  CodeResource,
  Deployment,
  Invite,
  KnowledgeBase,
  KnowledgeBaseJob,
  KnowledgeBaseQuery,
  KnowledgeBaseSearch,
  Membership,
  Organization,
  Retriever,
  RetrieverQuery,
  Run,
  RunEvent,
  Secret,
  User,
};

/** Every entity the data source knows; add new ones here. */
export const entities = [
  Organization,
  User,
  Membership,
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
  KnowledgeBaseSearch,
  Retriever,
  RetrieverQuery,
];
