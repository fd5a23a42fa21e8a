import type { Client } from '@temporalio/client';
import { DataSource, EntityManager } from 'typeorm';
import type { WorkflowStart } from './contracts';
import { startOptionsFor, WorkflowResource } from './workflow-start';

/** An unreachable Temporal answers the client with 503 after this long instead of retrying for minutes. */
const START_DEADLINE_MS = 5_000;

/**
 * Inserts a record and starts its workflow as one step: the insert runs in a transaction that commits only
 * after Temporal accepted the start, so a failed start leaves no zombie row. (If the commit itself fails, the
 * workflow finds no row and ends without effect.)
 */
export async function insertAndStart<T>(
  ds: DataSource,
  temporal: Client,
  opts: {
    taskQueue: string;
    resource: WorkflowResource;
    insert: (em: EntityManager) => Promise<T>;
    /** Built by `workflowStart` of the contracts: a workflow type with arguments of its input type. */
    start: WorkflowStart;
  },
): Promise<T> {
  return ds.transaction(async (em) => {
    const row = await opts.insert(em);
    await temporal.connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      temporal.workflow.start(opts.start.type, {
        ...startOptionsFor(opts.resource, opts.taskQueue),
        args: opts.start.args,
      }),
    );
    return row;
  });
}

/**
 * Polls `read` until `done` holds or `timeoutMs` passes; returns the last value. Used where the api answers
 * with a record once its workflow has recorded a state change (bounded wait).
 */
export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, deadline - Date.now()))));
    delay = Math.min(delay * 2, 250);
  }
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
