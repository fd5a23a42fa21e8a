// The writers of run and deployment state: their guarded transitions are the job kernel's (src/jobs), here
// typed for the runs' wing; a run's events and log lines are its feed (src/persistence/run-feed.ts: a
// per-run sequence and a NOTIFY on commit, which is how every api process learns about them).
import type { EntityManager } from 'typeorm';
import type { DeploymentStatus } from '../../../persistence/entities/deployment';
import { Run, RunStatus } from '../../../persistence/entities/run';
import { hydrateRow } from '../../../persistence/direct-sql';
import { DEPLOYMENT_JOB, RUN_JOB } from '../../../jobs/kinds';
import { transition } from '../../../jobs/transition';
import type { NewEvent } from '../../../persistence/run-feed';

export {
  appendEvents,
  appendLogs,
  parseRunPayload,
  RUN_CHANNEL,
  type LogLine,
  type NewEvent,
} from '../../../persistence/run-feed';

export type RunChanges = Partial<
  Pick<
    Run,
    'status_detail' | 'started_at' | 'completed_at' | 'output' | 'output_timestamp' | 'deployment_id' | 'limits'
  >
>;

/** Moves a run to `to` if that is forward from its current status (and notifies); the moved run, or undefined. */
export async function transitionRun(
  em: EntityManager,
  runId: string,
  to: RunStatus,
  changes: RunChanges = {},
  /** A further SQL condition the row must meet (see `transition`). */
  guard?: string,
  /** Appended to the run's feed with the move, in the same statement. */
  events: NewEvent[] = [],
): Promise<Run | undefined> {
  const row = await transition(em, RUN_JOB, runId, to, changes, guard, events);
  return row && hydrateRow(em.connection, Run, row);
}

/** Guarded, forward-only deployment transition; true when it moved. */
export const transitionDeployment = async (
  em: EntityManager,
  deploymentId: string,
  to: DeploymentStatus,
  changes: {
    status_detail?: unknown;
    build_path?: string | null;
    build_artifact_key?: string;
    build_sha256?: string;
    build_artifact_bytes?: string;
    code_source?: unknown;
    completed_at?: Date;
  } = {},
): Promise<boolean> => (await transition(em, DEPLOYMENT_JOB, deploymentId, to, changes)) !== undefined;
