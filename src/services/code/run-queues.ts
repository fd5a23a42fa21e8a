// The run queue of a structure, function, tool or assistant (docs/run-control.md#concurrency-keys-and-limits):
// what runs and waits per concurrency key, read from the runs themselves; pause and resume. Admission itself is
// src/jobs/admission.ts: a paused queue grants nothing, and resuming it grants what the limits allow now.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import { grantWaiting } from '../../jobs/admission';
import type { Assistant, CodeResource } from '../../persistence/entities';
import type { Concurrency } from '../../persistence/entities/code-resource';
import { slotGrantedSignal } from '../../temporal/contracts';

/** What owns a run queue: a structure, function or tool (table code_resources), or an assistant. */
export interface QueueOwner {
  table: 'code_resources' | 'assistants';
  /** Its id column, which its runs carry too. */
  idColumn: 'resource_id' | 'assistant_id';
  id: string;
  organization_id: string;
  concurrency: Concurrency | null;
  queue_paused_at: Date | null;
}

export const codeResourceQueue = (r: CodeResource): QueueOwner => ({
  table: 'code_resources',
  idColumn: 'resource_id',
  id: r.resource_id,
  organization_id: r.organization_id,
  concurrency: r.concurrency,
  queue_paused_at: r.queue_paused_at,
});

export const assistantQueue = (a: Assistant): QueueOwner => ({
  table: 'assistants',
  idColumn: 'assistant_id',
  id: a.assistant_id,
  organization_id: a.organization_id,
  concurrency: a.concurrency,
  queue_paused_at: a.queue_paused_at,
});

export interface KeyQueue {
  /** null when the resource declares no concurrency (its runs are counted together). */
  key: string | null;
  running: number;
  queued: number;
  limit: number | null;
}

export interface RunQueue {
  paused: boolean;
  paused_at: Date | null;
  running: number;
  queued: number;
  total_limit: number | null;
  keys: KeyQueue[];
}

/** Runs STARTING or RUNNING, and QUEUED, per key (the run's key, else the resource's default key, else ""). */
export async function runQueueOf(ds: DataSource, resource: QueueOwner): Promise<RunQueue> {
  const concurrency = resource.concurrency;
  const rows: Array<{ key: string | null; running: number; queued: number }> = await ds.query(
    `SELECT CASE WHEN $2::jsonb IS NULL THEN NULL ELSE coalesce(concurrency_key, $2::jsonb->>'key', '') END AS key,
            count(*) FILTER (WHERE status IN ('STARTING', 'RUNNING'))::int AS running,
            count(*) FILTER (WHERE status = 'QUEUED')::int AS queued
       FROM runs WHERE ${resource.idColumn} = $1 AND status IN ('QUEUED', 'STARTING', 'RUNNING')
      GROUP BY 1 ORDER BY 1`,
    [resource.id, concurrency ? JSON.stringify(concurrency) : null],
  );
  const keys = rows.map((r) => ({ ...r, limit: concurrency?.limit ?? null }));
  return {
    paused: resource.queue_paused_at !== null,
    paused_at: resource.queue_paused_at,
    running: keys.reduce((n, k) => n + k.running, 0),
    queued: keys.reduce((n, k) => n + k.queued, 0),
    total_limit: concurrency?.total_limit ?? null,
    keys,
  };
}

/** Pauses the queue: no run of the resource starts until it is resumed; runs already started go on. */
export async function pauseRunQueue(ds: DataSource, resource: QueueOwner): Promise<QueueOwner> {
  const [rows]: [Array<{ queue_paused_at: Date }>, number] = await ds.query(
    `UPDATE ${resource.table} SET queue_paused_at = coalesce(queue_paused_at, now()) WHERE ${resource.idColumn} = $1
     RETURNING queue_paused_at`,
    [resource.id],
  );
  return { ...resource, queue_paused_at: rows[0]?.queue_paused_at ?? resource.queue_paused_at };
}

/** Resumes the queue: its waiting runs are granted what the limits allow now, and told so. */
export async function resumeRunQueue(
  deps: { ds: DataSource; temporal: Client; config: Config },
  resource: QueueOwner,
): Promise<QueueOwner> {
  await deps.ds.query(`UPDATE ${resource.table} SET queue_paused_at = NULL WHERE ${resource.idColumn} = $1`, [
    resource.id,
  ]);
  const granted = await grantWaiting(deps.ds, resource.organization_id, {
    limit: deps.config.execution.orgMaxConcurrentRuns,
  });
  // A grant is a row state: a run whose signal is lost starts on its own re-try timer.
  await Promise.all(
    granted.map((g) =>
      deps.temporal.workflow
        .getHandle(g.workflowId)
        .signal(slotGrantedSignal)
        .catch((err: Error) => {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }),
    ),
  );
  return { ...resource, queue_paused_at: null };
}
