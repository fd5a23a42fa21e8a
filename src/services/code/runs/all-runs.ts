// The runs of every kind of an organization in one list (the console's Runs page): newest first, filtered by
// kind, status, resource, creator and creation time, paged by the server.
import { Between, DataSource, FindOptionsWhere, In, LessThan, MoreThanOrEqual } from 'typeorm';
import { Run, RunKind, RunStatus } from '../../../persistence/entities/run';
import type { PageRequest, Pagination } from '../../../persistence/pagination';
import { pageInOrg } from '../../../persistence/scoped';
import { workflowIdOf } from '../../../temporal/workflow-start';
import type { Caller } from '../../caller';

export const LISTED_RUN_KINDS = ['structure', 'function', 'tool', 'assistant', 'chat'] as const satisfies RunKind[];

export interface RunFilter {
  kinds?: RunKind[];
  statuses?: RunStatus[];
  /** The structure, function or tool, or the assistant. */
  resourceId?: string;
  /** The user or API key that started the run. */
  createdBy?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

function createdWithin(after?: Date, before?: Date) {
  if (after && before) return Between(after, new Date(before.getTime() - 1));
  if (after) return MoreThanOrEqual(after);
  if (before) return LessThan(before);
  return undefined;
}

export function pageAllRuns(
  ds: DataSource,
  caller: Caller,
  filter: RunFilter,
  page: PageRequest,
): Promise<{ items: Run[]; pagination: Pagination }> {
  const common: FindOptionsWhere<Run> = {
    ...(filter.kinds?.length ? { kind: In(filter.kinds) } : {}),
    ...(filter.statuses?.length ? { status: In(filter.statuses) } : {}),
    ...(filter.createdBy ? { created_by: filter.createdBy } : {}),
  };
  const created = createdWithin(filter.createdAfter, filter.createdBefore);
  if (created) common.created_at = created;
  // A resource id names a structure, function or tool, or an assistant: either column (OR).
  const where = filter.resourceId
    ? [
        { ...common, resource_id: filter.resourceId },
        { ...common, assistant_id: filter.resourceId },
      ]
    : common;
  return pageInOrg(ds, Run, caller.organizationId, page, where, {
    created_at: 'DESC',
    run_id: 'DESC',
  });
}

/** The id of a run's workflow in Temporal (`structure-run-<uuid>`, `chat-run-<uuid>`). */
export const runWorkflowId = (run: Pick<Run, 'kind' | 'run_id'>) =>
  workflowIdOf(`${run.kind}-run` as Parameters<typeof workflowIdOf>[0], run.run_id);
