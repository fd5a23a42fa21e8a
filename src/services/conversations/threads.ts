// Threads (conversations) and their messages (exchanges: input → output, at index 0, 1, 2, ...).
// Every change to a thread's messages locks the thread row first, so concurrent appends, replacements
// and deletes are serialized and indexes stay 0..n-1 without gaps or duplicates.
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import type { Caller } from '../caller';
import { notFound } from '../../errors';
import { PageRequest, paginate, Pagination, skipTake } from '../../persistence/pagination';
import { Thread, ThreadMessage } from '../../persistence/entities';
import { findInOrg } from '../../persistence/scoped';
import { aliasGuard, checkMetadata, returnedRows } from '../record-fields';
import { likeEscape } from '../../persistence/scoped';

/** Largest `input` and `output` of one message, in characters (the request body limit applies too). */
export const MAX_MESSAGE_TEXT = 1_048_576;
/** Most messages in one create or PATCH; also the default and largest page of a thread's messages. */
export const MAX_MESSAGES_PER_REQUEST = 1000;

type Metadata = Record<string, unknown>;

export interface MessageFields {
  input: string;
  output: string;
  metadata?: Metadata;
}

export interface ThreadFields {
  name?: string;
  alias?: string | null;
  /** Replaces all messages of the thread (PATCH), or its first messages (create). */
  messages?: MessageFields[];
  metadata?: Metadata;
}

/** A thread with the size of its conversation. */
export type ThreadView = Thread & {
  message_count: number;
  /** Characters (Unicode code points) of all inputs and outputs together. */
  messages_length: number;
};

function checkMessage(m: Partial<MessageFields>, path: string): void {
  checkMetadata(m.metadata, `${path}/metadata`);
}

function checkThreadFields(f: ThreadFields): void {
  checkMetadata(f.metadata, '/body/metadata');
  f.messages?.forEach((m, i) => checkMessage(m, `/body/messages/${i}`));
}

async function withStats(db: DataSource | EntityManager, threads: Thread[]): Promise<ThreadView[]> {
  if (!threads.length) return [];
  const rows: Array<{ thread_id: string; message_count: number; messages_length: string }> = await db.query(
    `SELECT thread_id, count(*)::int AS message_count,
            coalesce(sum(char_length(input) + char_length(output)), 0)::bigint AS messages_length
       FROM thread_messages WHERE thread_id = ANY($1::uuid[]) GROUP BY thread_id`,
    [threads.map((t) => t.thread_id)],
  );
  const stats = new Map(rows.map((r) => [r.thread_id, r]));
  return threads.map((t) =>
    Object.assign(t, {
      message_count: stats.get(t.thread_id)?.message_count ?? 0,
      messages_length: Number(stats.get(t.thread_id)?.messages_length ?? 0),
    }),
  );
}

export const findThread = (ds: DataSource, caller: Caller, threadId: string): Promise<Thread> =>
  findInOrg(ds, Thread, caller.organizationId, { thread_id: threadId }, 'Thread');

export async function getThread(ds: DataSource, caller: Caller, threadId: string): Promise<ThreadView> {
  return (await withStats(ds, [await findThread(ds, caller, threadId)]))[0];
}

/**
 * Newest first. `alias` and `created_by` match exactly; `starts_with` keeps threads whose name or alias
 * begins with the text (literally, case-sensitive).
 */
export async function listThreads(
  ds: DataSource,
  caller: Caller,
  page: PageRequest,
  filter: { alias?: string; startsWith?: string; createdBy?: string },
): Promise<{ items: ThreadView[]; pagination: Pagination }> {
  const { skip, take } = skipTake(page);
  const q = ds
    .getRepository(Thread)
    .createQueryBuilder('t')
    .where('t.organization_id = :org', { org: caller.organizationId });
  if (filter.alias !== undefined) q.andWhere('t.alias = :alias', { alias: filter.alias });
  if (filter.createdBy !== undefined) q.andWhere('t.created_by = :createdBy', { createdBy: filter.createdBy });
  if (filter.startsWith) {
    q.andWhere(`(t.name LIKE :prefix ESCAPE '\\' OR t.alias LIKE :prefix ESCAPE '\\')`, {
      prefix: `${likeEscape(filter.startsWith)}%`,
    });
  }
  const [rows, total] = await q
    .orderBy('t.created_at', 'DESC')
    .addOrderBy('t.thread_id', 'DESC')
    .offset(skip)
    .limit(take)
    .getManyAndCount();
  return { items: await withStats(ds, rows), pagination: paginate(page, total) };
}

/** Replaces every message of the (locked) thread by `messages`, at indexes 0..n-1. */
async function replaceMessages(
  em: EntityManager,
  thread: Thread,
  messages: MessageFields[],
  createdBy: string,
): Promise<void> {
  await em.query(`DELETE FROM thread_messages WHERE thread_id = $1`, [thread.thread_id]);
  if (!messages.length) return;
  await em.query(
    `INSERT INTO thread_messages (message_id, thread_id, organization_id, index, input, output, metadata, created_by)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, ord - 1, m->>'input', m->>'output', coalesce(m->'metadata', '{}'), $3::text
       FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS t(m, ord)`,
    [thread.thread_id, thread.organization_id, createdBy, JSON.stringify(messages)],
  );
}

export async function createThread(
  ds: DataSource,
  caller: Caller,
  f: ThreadFields & { name: string },
): Promise<ThreadView> {
  checkThreadFields(f);
  const now = new Date();
  const thread: Thread = {
    thread_id: randomUUID(),
    organization_id: caller.organizationId,
    name: f.name,
    alias: f.alias ?? null,
    metadata: f.metadata ?? {},
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  return aliasGuard('threads_alias_idx', 'thread', f.alias, () =>
    ds.transaction(async (em) => {
      await em.getRepository(Thread).save(thread);
      if (f.messages?.length) await replaceMessages(em, thread, f.messages, caller.actor);
      return (await withStats(em, [thread]))[0];
    }),
  );
}

/** Locks the thread row (FOR UPDATE) for the rest of the transaction; 404 when it is not the organization's. */
async function lockThread(em: EntityManager, organizationId: string, threadId: string): Promise<Thread> {
  const thread = await em
    .getRepository(Thread)
    .createQueryBuilder('t')
    .where('t.thread_id = :threadId AND t.organization_id = :org', { threadId, org: organizationId })
    .setLock('pessimistic_write')
    .getOne();
  if (!thread) throw notFound('Thread');
  return thread;
}

/** Given fields replace the old ones: `messages` all messages, `metadata` the whole object; `alias: null` clears it. */
export async function updateThread(
  ds: DataSource,
  caller: Caller,
  threadId: string,
  f: ThreadFields,
): Promise<ThreadView> {
  checkThreadFields(f);
  return aliasGuard('threads_alias_idx', 'thread', f.alias, () =>
    ds.transaction(async (em) => {
      const thread = await lockThread(em, caller.organizationId, threadId);
      if (f.name !== undefined) thread.name = f.name;
      if (f.alias !== undefined) thread.alias = f.alias;
      if (f.metadata !== undefined) thread.metadata = f.metadata;
      thread.updated_at = new Date();
      await em.getRepository(Thread).save(thread);
      if (f.messages !== undefined) await replaceMessages(em, thread, f.messages, caller.actor);
      return (await withStats(em, [thread]))[0];
    }),
  );
}

/** Deletes the thread and its messages; assistant runs keep running with no thread. */
export async function deleteThread(ds: DataSource, thread: Thread): Promise<void> {
  await ds.getRepository(Thread).delete({ thread_id: thread.thread_id });
}

// ---- Messages ----

export async function listThreadMessages(
  ds: DataSource,
  caller: Caller,
  threadId: string,
  page: PageRequest,
): Promise<{ items: ThreadMessage[]; pagination: Pagination }> {
  await findThread(ds, caller, threadId);
  const [items, total] = await ds.getRepository(ThreadMessage).findAndCount({
    where: { thread_id: threadId },
    order: { index: 'ASC' },
    ...skipTake(page),
  });
  return { items, pagination: paginate(page, total) };
}

/**
 * Appends a message at the thread's next index. Locks the thread row, so concurrent appends get
 * distinct, consecutive indexes; usable inside a caller's transaction (the lock is held until it ends).
 */
export async function appendThreadMessage(
  em: EntityManager,
  organizationId: string,
  threadId: string,
  fields: { input: string; output: string; metadata?: Metadata; createdBy: string },
): Promise<ThreadMessage> {
  await lockThread(em, organizationId, threadId);
  // Under READ COMMITTED this statement sees every append committed before the lock was granted.
  const rows: ThreadMessage[] = await em.query(
    `INSERT INTO thread_messages (message_id, thread_id, organization_id, index, input, output, metadata, created_by)
     SELECT $1::uuid, $2::uuid, $3::uuid, coalesce(max(index) + 1, 0), $4::text, $5::text, $6::jsonb, $7::text
       FROM thread_messages WHERE thread_id = $2::uuid
     RETURNING *`,
    [
      randomUUID(),
      threadId,
      organizationId,
      fields.input,
      fields.output,
      JSON.stringify(fields.metadata ?? {}),
      fields.createdBy,
    ],
  );
  await em.query(`UPDATE threads SET updated_at = now() WHERE thread_id = $1`, [threadId]);
  return rows[0];
}

export async function createThreadMessage(
  ds: DataSource,
  caller: Caller,
  threadId: string,
  m: MessageFields,
): Promise<ThreadMessage> {
  checkMessage(m, '/body');
  return ds.transaction((em) =>
    appendThreadMessage(em, caller.organizationId, threadId, { ...m, createdBy: caller.actor }),
  );
}

export const findMessage = (ds: DataSource, caller: Caller, messageId: string): Promise<ThreadMessage> =>
  findInOrg(ds, ThreadMessage, caller.organizationId, { message_id: messageId }, 'Message');

/** Changes the given fields (`metadata` replaces the whole object); the index stays. */
export async function updateMessage(
  ds: DataSource,
  caller: Caller,
  messageId: string,
  f: Partial<MessageFields>,
): Promise<ThreadMessage> {
  checkMessage(f, '/body');
  return ds.transaction(async (em) => {
    const rows = returnedRows<ThreadMessage>(
      await em.query(
        `UPDATE thread_messages SET input = coalesce($3, input), output = coalesce($4, output),
              metadata = coalesce($5::jsonb, metadata), updated_at = now()
        WHERE message_id = $1 AND organization_id = $2 RETURNING *`,
        [
          messageId,
          caller.organizationId,
          f.input ?? null,
          f.output ?? null,
          f.metadata === undefined ? null : JSON.stringify(f.metadata),
        ],
      ),
    );
    if (!rows[0]) throw notFound('Message');
    await em.query(`UPDATE threads SET updated_at = now() WHERE thread_id = $1`, [rows[0].thread_id]);
    return rows[0];
  });
}

/**
 * Deletes a message and moves every later message of its thread down by one, so indexes stay 0..n-1
 * (index == position). The (thread_id, index) constraint is checked at the end of that UPDATE.
 */
export async function deleteMessage(ds: DataSource, caller: Caller, messageId: string): Promise<void> {
  const { thread_id: threadId } = await findMessage(ds, caller, messageId);
  await ds.transaction(async (em) => {
    await lockThread(em, caller.organizationId, threadId);
    const deleted = returnedRows<{ index: number }>(
      await em.query(`DELETE FROM thread_messages WHERE message_id = $1 AND thread_id = $2 RETURNING index`, [
        messageId,
        threadId,
      ]),
    );
    // Deleted by someone else between the lookup and the lock.
    if (!deleted.length) throw notFound('Message');
    await em.query(`UPDATE thread_messages SET index = index - 1 WHERE thread_id = $1 AND index > $2`, [
      threadId,
      deleted[0].index,
    ]);
    await em.query(`UPDATE threads SET updated_at = now() WHERE thread_id = $1`, [threadId]);
  });
}

/** Every exchange of a thread, in index order: the conversation so far, for a model. */
export async function threadExchanges(
  ds: DataSource,
  threadId: string,
): Promise<Array<{ input: string; output: string }>> {
  return ds.query(`SELECT input, output FROM thread_messages WHERE thread_id = $1 ORDER BY index`, [threadId]);
}
