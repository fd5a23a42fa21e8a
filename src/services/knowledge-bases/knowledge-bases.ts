// Knowledge bases: CRUD. Guarantees: a knowledge base is of a type this platform stores itself
// (gtc_pg_vector, gtc_hybrid_sql_pg_vector; the others are a 400 naming the type); every asset path names a
// bucket of the caller's organization (409 naming the bucket otherwise); the embedding model is resolved once,
// at create or update, to a configured `provider/model` or to none (full text only), and recorded; a
// `schedule_expression` has its Temporal Schedule (src/temporal/user-schedules.ts), removed with the knowledge base.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Caller } from '../caller';
import type { ModelsConfig } from '../../config';
import { badRequest, missingReferences } from '../../errors';
import type { PageRequest } from '../../persistence/pagination';
import { KnowledgeBase, KnowledgeBaseType } from '../../persistence/entities/knowledge-base';
import { findInOrg, pageInOrg } from '../../persistence/scoped';
import { dropVectorIndex } from './vector-index';
import { stopOpenJobs } from './jobs';
import type { Transform } from '../../persistence/entities/data-connector';
import { assertIdsInOrg } from '../../persistence/scoped';
import { deleteUserSchedule, parseScheduleExpression, putUserSchedule } from '../../temporal/user-schedules';

/** Types stored in this platform's own PostgreSQL. */
export const SERVED_TYPES: readonly KnowledgeBaseType[] = ['gtc_pg_vector', 'gtc_hybrid_sql_pg_vector'];
/** Types of the wire format this platform does not serve (an outside database, pgai). */
export const UNSERVED_TYPES = ['pg_vector', 'pgai_knowledge_base'] as const;

export interface KnowledgeBaseFields {
  name?: string;
  description?: string;
  type?: string;
  config?: Record<string, Record<string, unknown>>;
  asset_paths?: string[];
  embedding_model?: string;
  use_default_embedding_model?: boolean;
  /** A Temporal Schedule starts jobs by it (src/temporal/user-schedules.ts); null removes it. */
  schedule_expression?: string | null;
  /** Structures each asset's text passes through before chunking (src/services/data-connectors/transforms.ts). */
  transforms?: Transform[];
}

/** Where a knowledge base's schedule is kept (absent: the schedule is not touched). */
export interface ScheduleDeps {
  temporal: Client;
  taskQueue: string;
}

/** Checks the schedule expression (400 naming the forms) and that the transforms' structures are the organization's (409). */
async function checkScheduleAndTransforms(ds: DataSource, organizationId: string, fields: KnowledgeBaseFields) {
  if (fields.schedule_expression) parseScheduleExpression(fields.schedule_expression);
  for (const [i, t] of (fields.transforms ?? []).entries())
    await assertIdsInOrg(ds, 'structure', organizationId, [t.structure.structure_id], `/body/transforms/${i}`);
}

const putSchedule = (schedules: ScheduleDeps, kb: KnowledgeBase) =>
  putUserSchedule(schedules.temporal, schedules.taskQueue, {
    target: 'knowledge-base',
    id: kb.knowledge_base_id,
    organizationId: kb.organization_id,
    name: kb.name,
    expression: kb.schedule_expression,
  });

/** `<bucket_id>/<name>` → its parts; the route's schema made sure of the uuid and the slash. */
export function splitAssetPath(path: string): { bucketId: string; name: string; prefix: boolean } {
  const slash = path.indexOf('/');
  const name = path.slice(slash + 1);
  return { bucketId: path.slice(0, slash).toLowerCase(), name, prefix: name === '' || name.endsWith('/') };
}

async function assertBuckets(ds: DataSource, organizationId: string, paths: string[]): Promise<void> {
  const ids = [...new Set(paths.map((p) => splitAssetPath(p).bucketId))];
  if (!ids.length) return;
  const rows: Array<{ id: string }> = await ds.query(
    `SELECT bucket_id AS id FROM buckets WHERE bucket_id = ANY($1::uuid[]) AND organization_id = $2`,
    [ids, organizationId],
  );
  const found = new Set(rows.map((r) => r.id));
  const errors = paths.flatMap((p, i) => {
    const { bucketId } = splitAssetPath(p);
    return found.has(bucketId) ? [] : [{ message: `Bucket not found: ${bucketId}`, path: `/body/asset_paths/${i}` }];
  });
  if (errors.length) throw missingReferences(errors);
}

/**
 * The type must be one this platform serves (400 naming it otherwise; the route's schema says so first). The
 * config's settings are read from its member named like the type, or its only member.
 */
function checkType(type: string): KnowledgeBaseType {
  if (!(SERVED_TYPES as readonly string[]).includes(type)) {
    const why = (UNSERVED_TYPES as readonly string[]).includes(type)
      ? 'is not served by this platform (it needs an outside database)'
      : 'is unknown';
    throw badRequest(
      `Knowledge base type "${type}" ${why}; use gtc_pg_vector or gtc_hybrid_sql_pg_vector (stored in this platform's PostgreSQL)`,
      '/body/type',
    );
  }
  return type as KnowledgeBaseType;
}

/** The settings member of a config: the one named like the type, else its only member. */
export function settingsOf(config: Record<string, Record<string, unknown>> | undefined, type: string | undefined) {
  if (!config) return undefined;
  return (type && config[type]) || Object.values(config)[0];
}

/**
 * The embedding model of a request: an explicit `embedding_model` (in the config member, or top level):
 * `provider/model` of a configured provider, or a model of the default embedding model's provider (openai
 * when only OPENAI_API_KEY is set); otherwise (or with `use_default_embedding_model`) the configured default;
 * none when nothing is configured (full text only).
 */
export function resolveEmbeddingModel(models: ModelsConfig, fields: KnowledgeBaseFields): string | null {
  const member = settingsOf(fields.config, fields.type);
  const explicit = (member?.embedding_model as string | undefined) ?? fields.embedding_model;
  const useDefault = (member?.use_default_embedding_model as boolean | undefined) ?? fields.use_default_embedding_model;
  if (!explicit || useDefault) return models.defaultEmbeddingModel ?? null;
  const slash = explicit.indexOf('/');
  if (slash > 0 && Object.hasOwn(models.providers, explicit.slice(0, slash))) return explicit;
  const provider = models.defaultEmbeddingModel?.split('/')[0] ?? (models.providers.openai ? 'openai' : undefined);
  if (!provider) {
    throw badRequest(
      `Embedding model "${explicit}" names no configured model provider (set DEFAULT_EMBEDDING_MODEL or MODEL_PROVIDERS)`,
      '/body/embedding_model',
    );
  }
  return `${provider}/${explicit}`;
}

export const findKnowledgeBase = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, KnowledgeBase, caller.organizationId, { knowledge_base_id: id }, 'Knowledge base');

export const listKnowledgeBases = (ds: DataSource, caller: Caller, page: PageRequest) =>
  pageInOrg(ds, KnowledgeBase, caller.organizationId, page, {}, { created_at: 'DESC', knowledge_base_id: 'DESC' });

export async function createKnowledgeBase(
  ds: DataSource,
  models: ModelsConfig,
  caller: Caller,
  fields: KnowledgeBaseFields & { name: string; type: string; config: Record<string, Record<string, unknown>> },
  schedules?: ScheduleDeps,
): Promise<KnowledgeBase> {
  const type = checkType(fields.type);
  const assetPaths = [...new Set(fields.asset_paths ?? [])];
  await assertBuckets(ds, caller.organizationId, assetPaths);
  await checkScheduleAndTransforms(ds, caller.organizationId, fields);
  const now = new Date();
  const kb = await ds.getRepository(KnowledgeBase).save({
    knowledge_base_id: randomUUID(),
    organization_id: caller.organizationId,
    name: fields.name,
    description: fields.description ?? null,
    type,
    config: fields.config,
    asset_paths: assetPaths,
    embedding_model: resolveEmbeddingModel(models, fields),
    embedding_dimensions: null,
    schedule_expression: fields.schedule_expression ?? null,
    transforms: fields.transforms ?? [],
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  });
  if (schedules && kb.schedule_expression) await putSchedule(schedules, kb);
  return kb;
}

/**
 * Changes the given fields. A changed embedding model forgets the dimension and the vector index: the next
 * job embeds every chunk again (chunks remember the model they were embedded with).
 */
export async function updateKnowledgeBase(
  ds: DataSource,
  models: ModelsConfig,
  caller: Caller,
  id: string,
  fields: KnowledgeBaseFields,
  schedules?: ScheduleDeps,
): Promise<KnowledgeBase> {
  const kb = await findKnowledgeBase(ds, caller, id);
  await checkScheduleAndTransforms(ds, caller.organizationId, fields);
  if (fields.transforms !== undefined) kb.transforms = fields.transforms;
  const scheduleChanged =
    fields.schedule_expression !== undefined && fields.schedule_expression !== kb.schedule_expression;
  if (fields.schedule_expression !== undefined) kb.schedule_expression = fields.schedule_expression;
  if (fields.type !== undefined || fields.config !== undefined) {
    kb.type = checkType(fields.type ?? kb.type);
    if (fields.config) kb.config = fields.config;
  }
  if (fields.asset_paths !== undefined) {
    kb.asset_paths = [...new Set(fields.asset_paths)];
    await assertBuckets(ds, caller.organizationId, kb.asset_paths);
  }
  if (fields.name !== undefined) kb.name = fields.name;
  if (fields.description !== undefined) kb.description = fields.description;
  const modelGiven =
    fields.embedding_model !== undefined ||
    fields.use_default_embedding_model !== undefined ||
    fields.config !== undefined;
  if (modelGiven) {
    const model = resolveEmbeddingModel(models, { ...fields, type: kb.type, config: kb.config });
    if (model !== kb.embedding_model) {
      kb.embedding_model = model;
      kb.embedding_dimensions = null;
      await dropVectorIndex(ds, kb.knowledge_base_id);
      await ds.query(
        `UPDATE knowledge_base_chunks SET embedding = NULL, embedding_model = NULL WHERE knowledge_base_id = $1`,
        [kb.knowledge_base_id],
      );
    }
  }
  kb.updated_at = new Date();
  const saved = await ds.getRepository(KnowledgeBase).save(kb);
  if (schedules && scheduleChanged) await putSchedule(schedules, saved);
  return saved;
}

/** Deletes the knowledge base with its jobs (open ones are cancelled first, bounded wait), chunks and queries. */
export async function deleteKnowledgeBase(
  deps: { ds: DataSource; temporal: Client },
  caller: Caller,
  id: string,
): Promise<void> {
  const kb = await findKnowledgeBase(deps.ds, caller, id);
  await deleteUserSchedule(deps.temporal, 'knowledge-base', kb.knowledge_base_id);
  await stopOpenJobs(deps, caller, kb.knowledge_base_id);
  await deps.ds.getRepository(KnowledgeBase).delete({ knowledge_base_id: kb.knowledge_base_id });
  await dropVectorIndex(deps.ds, kb.knowledge_base_id);
}
