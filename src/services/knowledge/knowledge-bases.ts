// Knowledge bases: CRUD. Guarantees: a knowledge base is of a type this platform serves (gtc_pg_vector,
// gtc_hybrid_sql_pg_vector in our PostgreSQL; pg_vector in an outside one, chunk-store.ts; pgai_knowledge_base
// is a 400 naming the type); a pg_vector password is sealed at once (secret-box.ts, bound to the knowledge
// base's id) and never stored or answered in clear, and the type cannot move to or from pg_vector (its chunks
// live elsewhere: create a new knowledge base); every asset path names a
// bucket of the caller's organization (409 naming the bucket otherwise); the embedding model is resolved once,
// at create or update, to a configured `provider/model` or to none (full text only), and recorded; a
// `schedule_expression` has its Temporal Schedule (src/temporal/user-schedules.ts), removed with the knowledge base.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Caller } from '../caller';
import type { Config, ModelsConfig } from '../../config';
import { badRequest, conflict, missingReferences } from '../../errors';
import type { PageRequest } from '../../persistence/pagination';
import { KnowledgeBase, KnowledgeBaseType } from '../../persistence/entities/knowledge-base';
import { findInOrg, pageInOrg } from '../../persistence/scoped';
import { outboundPolicyFor } from '../../security/outbound-policy';
import type { SecretBox } from '../../security/secret-box';
import { dropOutsideTable, sealPassword } from './index/chunk-store';
import { dropVectorIndex } from './index/vector-index';
import { DEFAULT_LANGUAGE } from './index/full-text';
import { stopOpenJobs } from './jobs';
import type { Transform } from '../../persistence/entities/data-connector';
import { assertIdsInOrg } from '../../persistence/scoped';
import { deleteUserSchedule, parseScheduleExpression, putUserSchedule } from '../../temporal/user-schedules';
import { forgetDeleted } from '../../persistence/references';
import { settingsOf } from './settings';

/** Types stored in this platform's own PostgreSQL. */
export const SERVED_TYPES: readonly KnowledgeBaseType[] = ['gtc_pg_vector', 'gtc_hybrid_sql_pg_vector', 'pg_vector'];

export interface KnowledgeBaseFields {
  name?: string;
  description?: string;
  type?: string;
  config?: Record<string, Record<string, unknown>>;
  asset_paths?: string[];
  embedding_model?: string;
  use_default_embedding_model?: boolean;
  /** The text search configuration of its full text (full-text.ts); fixed once created. */
  language?: string;
  /** A Temporal Schedule starts jobs by it (src/temporal/user-schedules.ts); null removes it. */
  schedule_expression?: string | null;
  /** Structures each asset's text passes through before chunking (src/services/transforms/apply.ts). */
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
    const why =
      type === 'pgai_knowledge_base'
        ? "is not served by this platform (pgai is Timescale's extension, which it does not run)"
        : 'is unknown';
    throw badRequest(
      `Knowledge base type "${type}" ${why}; use gtc_pg_vector, gtc_hybrid_sql_pg_vector or pg_vector`,
      '/body/type',
    );
  }
  return type as KnowledgeBaseType;
}

/**
 * The embedding model of a request: an explicit `embedding_model` (in the config member, or top level):
 * `provider/model` of a configured provider, or a model of the default embedding model's provider (openai
 * when only OPENAI_API_KEY is set); otherwise (or with `use_default_embedding_model`) the configured default;
 * none when nothing is configured, or when `use_default_embedding_model` is false and no model is named
 * (full text only).
 */
export function resolveEmbeddingModel(models: ModelsConfig, fields: KnowledgeBaseFields): string | null {
  const member = settingsOf(fields.config, fields.type);
  const explicit = (member?.embedding_model as string | undefined) ?? fields.embedding_model;
  const useDefault = (member?.use_default_embedding_model as boolean | undefined) ?? fields.use_default_embedding_model;
  if (!explicit && useDefault === false) return null;
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

const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/**
 * The config as stored: for pg_vector, the connection string (a postgres:// URL without a password: the
 * password goes in `password`) and the password sealed; other types as given.
 */
function storedConfig(
  box: SecretBox | undefined,
  knowledgeBaseId: string,
  type: KnowledgeBaseType,
  config: Record<string, Record<string, unknown>>,
): Record<string, Record<string, unknown>> {
  const settings = settingsOf(config, type);
  if (settings?.parent_child === true && settings.chunking === 'length') {
    throw badRequest(
      'parent_child answers sections, which only chunking "structure" makes: drop chunking "length"',
      `/body/config/${type}/parent_child`,
    );
  }
  if (type !== 'pg_vector') {
    // Never kept in clear under another type's config.
    if (config.pg_vector) throw conflict(`config.pg_vector belongs to a pg_vector knowledge base, not ${type}`);
    return config;
  }
  const member = config.pg_vector as { connection_string?: string; password?: string } | undefined;
  if (!member?.connection_string || typeof member.password !== 'string') {
    throw conflict('A pg_vector knowledge base needs config.pg_vector with connection_string and password');
  }
  let url: URL | undefined;
  try {
    url = new URL(member.connection_string);
  } catch {
    url = undefined;
  }
  if (!url || !['postgres:', 'postgresql:'].includes(url.protocol) || !url.hostname) {
    throw badRequest(
      'connection_string must be a postgres:// or postgresql:// URL naming a host',
      '/body/config/pg_vector/connection_string',
    );
  }
  // Only sslmode: other parameters of the driver read files on the worker (sslcert, sslkey, sslrootcert) or
  // point elsewhere than the URL's host (host=/a/socket).
  const params = [...url.searchParams.keys()];
  if (params.some((k) => k !== 'sslmode') || !SSL_MODES.includes(url.searchParams.get('sslmode') ?? 'prefer')) {
    throw badRequest(
      `connection_string may carry only sslmode (${SSL_MODES.join(', ')}) as a parameter`,
      '/body/config/pg_vector/connection_string',
    );
  }
  if (url.password) {
    throw badRequest(
      'connection_string must not hold a password: give it in config.pg_vector.password (it is stored encrypted)',
      '/body/config/pg_vector/connection_string',
    );
  }
  if (!box) throw new Error('sealing a pg_vector password needs the secret box');
  const { password, ...rest } = member;
  return { pg_vector: { ...rest, password_sealed: sealPassword(box, knowledgeBaseId, password) } };
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
  box?: SecretBox,
): Promise<KnowledgeBase> {
  const type = checkType(fields.type);
  const id = randomUUID();
  const config = storedConfig(box, id, type, fields.config);
  const assetPaths = [...new Set(fields.asset_paths ?? [])];
  await assertBuckets(ds, caller.organizationId, assetPaths);
  await checkScheduleAndTransforms(ds, caller.organizationId, fields);
  const now = new Date();
  const kb = await ds.getRepository(KnowledgeBase).save({
    knowledge_base_id: id,
    organization_id: caller.organizationId,
    name: fields.name,
    description: fields.description ?? null,
    type,
    config,
    asset_paths: assetPaths,
    embedding_model: resolveEmbeddingModel(models, fields),
    embedding_dimensions: null,
    language: fields.language ?? DEFAULT_LANGUAGE,
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
  box?: SecretBox,
): Promise<KnowledgeBase> {
  const kb = await findKnowledgeBase(ds, caller, id);
  if (fields.language !== undefined && fields.language !== kb.language) {
    // Every chunk's tsvector and the statistics are in the language: another one is another index.
    throw conflict(
      `The language cannot change from ${kb.language} to ${fields.language}: its chunks are indexed in ${kb.language} (create a new knowledge base)`,
    );
  }
  await checkScheduleAndTransforms(ds, caller.organizationId, fields);
  if (fields.transforms !== undefined) kb.transforms = fields.transforms;
  const scheduleChanged =
    fields.schedule_expression !== undefined && fields.schedule_expression !== kb.schedule_expression;
  if (fields.schedule_expression !== undefined) kb.schedule_expression = fields.schedule_expression;
  if (fields.type !== undefined || fields.config !== undefined) {
    const type = checkType(fields.type ?? kb.type);
    if ((type === 'pg_vector') !== (kb.type === 'pg_vector')) {
      throw conflict(
        `The type cannot change from ${kb.type} to ${type}: their chunks live in different databases (create a new knowledge base)`,
      );
    }
    kb.type = type;
    if (fields.config) kb.config = storedConfig(box, kb.knowledge_base_id, type, fields.config);
    else if (type === 'pg_vector' && !kb.config.pg_vector) throw conflict('config.pg_vector is required');
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

/**
 * Deletes the knowledge base with its jobs (open ones are cancelled first, bounded wait), chunks and queries; the
 * assistants and the retrievers' inline components that name it go with it, in the same transaction.
 */
export async function deleteKnowledgeBase(
  deps: { ds: DataSource; temporal: Client; box?: SecretBox; config: Pick<Config, 'outbound' | 'logLevel'> },
  caller: Caller,
  id: string,
): Promise<void> {
  const kb = await findKnowledgeBase(deps.ds, caller, id);
  await deleteUserSchedule(deps.temporal, 'knowledge-base', kb.knowledge_base_id);
  await stopOpenJobs(deps, caller, kb.knowledge_base_id);
  await deps.ds.transaction(async (em) => {
    await forgetDeleted(em, 'knowledge_base', kb.organization_id, kb.knowledge_base_id);
    await em.getRepository(KnowledgeBase).delete({ knowledge_base_id: kb.knowledge_base_id });
  });
  await dropVectorIndex(deps.ds, kb.knowledge_base_id);
  // pg_vector: its table in the outside database goes too, when that database can be reached.
  if (kb.type === 'pg_vector' && deps.box) await dropOutsideTable(kb, deps.box, outboundPolicyFor(deps.config));
}
