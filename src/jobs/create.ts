// The one creation of a job: its record and its workflow's start as one step (insertAndStart), so that a
// failed start leaves no zombie row; and the start of a short workflow whose result the caller waits for
// (startAndWait). The end of a job is awaited in ./await-end.ts.
import type { Client } from '@temporalio/client';
import { DataSource, EntityManager } from 'typeorm';
import type { WorkflowStart } from '../temporal/contracts';
import { startOptionsFor, type WorkflowResource } from '../temporal/workflow-start';
import { jobsCreated } from '../observability/metrics';
import { tagActiveSpan } from '../observability/tracing';
import { insertClaimed, releaseKeyOf, takePendingClaim } from './idempotency';

/** An unreachable Temporal answers the client with 503 after this long instead of retrying for minutes. */
const START_DEADLINE_MS = 5_000;

/**
 * Inserts a record and starts its workflow as one step, so that a failed start leaves no zombie row.
 * With `undo` (the hot paths: runs), the insert commits first and the start follows, so no pooled connection
 * waits on Temporal; a failed start then runs `undo` (and a process that dies in between leaves a QUEUED row
 * with no workflow, which the reconciler settles). Without it, the insert runs in a transaction that commits
 * only after Temporal accepted the start. (A workflow that finds no row ends without effect.)
 * Inside createIdempotently, the insert claims the request's idempotency key in the same transaction.
 */
export async function insertAndStart<T>(
  ds: DataSource,
  temporal: Client,
  opts: {
    taskQueue: string;
    resource: WorkflowResource;
    insert: (em: EntityManager) => Promise<T>;
    /** Removes what `insert` wrote, after a failed start. */
    undo?: (em: EntityManager) => Promise<unknown>;
    /**
     * `insert` is one statement (atomic on its own): with `undo` and no idempotency key to claim, it runs
     * outside a transaction, one round trip instead of BEGIN, INSERT, COMMIT (the burst of creates).
     */
    oneStatement?: boolean;
    /**
     * Built by `workflowStart` of the contracts: a workflow type with arguments of its input type; or built
     * from the inserted row, with the summary it gives (a row whose insert also read its resource).
     */
    start: WorkflowStart | ((row: T) => WorkflowStart & { summary?: string });
  },
): Promise<T> {
  const start = (row: T) => {
    const built: WorkflowStart & { summary?: string } = typeof opts.start === 'function' ? opts.start(row) : opts.start;
    const resource = built.summary ? { ...opts.resource, summary: built.summary } : opts.resource;
    return temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      temporal.workflow.start(built.type, {
        ...startOptionsFor(resource, opts.taskQueue),
        args: built.args,
      }),
    );
  };
  const claim = takePendingClaim();
  const insert = claim
    ? (em: EntityManager) => insertClaimed(em, claim, opts.resource, () => opts.insert(em))
    : opts.insert;
  const undo =
    opts.undo &&
    (async (em: EntityManager) => {
      if (claim) await releaseKeyOf(em, opts.resource.id);
      return opts.undo?.(em);
    });
  tagActiveSpan(opts.resource);
  if (!undo) {
    const row = await ds.transaction(async (em) => {
      const row = await insert(em);
      await start(row);
      return row;
    });
    jobsCreated.inc({ kind: opts.resource.kind });
    return row;
  }
  const row = await (opts.oneStatement && !claim ? insert(ds.manager) : ds.transaction((em) => insert(em)));
  try {
    await start(row);
  } catch (err) {
    await ds.transaction((em) => undo(em)).catch(() => undefined); // else the reconciler settles the row
    throw err;
  }
  jobsCreated.inc({ kind: opts.resource.kind });
  return row;
}

/**
 * Starts a short workflow whose record its activity writes (a knowledge base query) and waits, bounded, for
 * its result. An unreachable Temporal is a 503 after the start deadline, like insertAndStart.
 */
export async function startAndWait<R>(
  temporal: Client,
  opts: { taskQueue: string; resource: WorkflowResource; start: WorkflowStart; timeoutMs: number },
): Promise<R> {
  const handle = await temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
    temporal.workflow.start(opts.start.type, {
      ...startOptionsFor(opts.resource, opts.taskQueue),
      args: opts.start.args,
      workflowExecutionTimeout: `${Math.ceil(opts.timeoutMs / 1000)} seconds`,
    }),
  );
  return (await handle.result()) as R;
}
