// The one terminal write of the jobs whose workflow gives its ending as a JobEnding (knowledge base jobs, data
// jobs, integration deliveries): the ending's words go into status_detail, its counts into their columns,
// through the guarded transition, so a job that already ended keeps its end and a retried activity is
// harmless. Runs and deployments end through their own steps (code/runs/lifecycle.ts, code/deployment-steps.ts):
// their endings also write events, outputs and builds.
import type { DataSource } from 'typeorm';
import type { DataJobEnding } from '../temporal/contracts';
import type { JobKind, Row } from './kinds';
import { transition } from './transition';

/** Every member a JobEnding (and its extensions: KnowledgeBaseJobEnding, DataJobEnding) may carry. */
export type AnyJobEnding = DataJobEnding;

/** What the ending says in status_detail (only the members it has). */
function detailOf(ending: AnyJobEnding): Row {
  return {
    ...(ending.reason ? { reason: ending.reason } : {}),
    ...(ending.message ? { message: ending.message } : {}),
    ...(ending.requestedBy ? { requested_by: ending.requestedBy } : {}),
    ...(ending.stats ? { stats: ending.stats } : {}),
    ...(ending.knowledgeBaseJobIds?.length ? { knowledge_base_job_ids: ending.knowledgeBaseJobIds } : {}),
  };
}

/** Ends job `id` of `kind` as `ending` says, unless it already ended; answers its status then, or 'MISSING'. */
export async function finishJob(
  ds: DataSource,
  kind: JobKind,
  id: string,
  ending: AnyJobEnding,
): Promise<string | 'MISSING'> {
  const read = async (columns: string) =>
    ((await ds.query(`SELECT ${columns} FROM ${kind.table} WHERE ${kind.idColumn} = $1`, [id])) as Row[])[0];
  // A kind whose detail tells what the job did on its way (a delivery's started runs) keeps it.
  const kept = kind.onEnd?.keepDetail ? ((await read('status_detail'))?.status_detail as Row | null) : undefined;
  const moved = await transition(ds, kind, id, ending.status, {
    status_detail: { ...(kept ?? {}), ...detailOf(ending) },
    ...(ending.errors ? { errors: ending.errors } : {}),
    ...(ending.bytesIngested !== undefined ? { bytes_ingested: ending.bytesIngested } : {}),
  });
  if (moved) return moved.status as string;
  return ((await read('status'))?.status as string | undefined) ?? 'MISSING';
}
