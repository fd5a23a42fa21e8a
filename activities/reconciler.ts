import type { ActivityDeps } from './deps';
import { releaseSlot, staleSlotHolders } from '../src/jobs/admission';
import { settleLostJobs, workflowState } from '../src/jobs/reconcile';
import { sweepExpiredKeys } from '../src/jobs/idempotency';
import { sweepOldAuditEvents } from '../src/services/accounts/audit';
import { signalGranted } from './execution-slots';

/**
 * Frees the execution slots (and queue places) of jobs whose workflow closed without giving them back (a
 * terminated workflow, a lost release), and signals the waiters that get them. Answers how many were freed.
 */
async function freeOrphanSlots(deps: ActivityDeps, input: { olderThanSeconds: number; limit: number }) {
  let freed = 0;
  for (const holder of await staleSlotHolders(deps.ds, input)) {
    if ((await workflowState(deps.temporal, holder.workflowId)) === 'RUNNING') continue;
    const limit = deps.config.execution.orgMaxConcurrentRuns;
    await signalGranted(deps, await releaseSlot(deps.ds, holder, { limit }));
    freed++;
  }
  return freed;
}

export function createReconcilerActivities(deps: ActivityDeps) {
  return {
    /**
     * Settles the lost jobs of every kind (src/jobs/reconcile.ts), frees orphaned execution slots, and deletes
     * expired idempotency keys (a live key never depends on this: an expired one is taken over when reused) and
     * audit events past their retention.
     */
    async settleOrphans(input: { olderThanSeconds: number; limit: number }): Promise<{
      runs: number;
      deployments: number;
      knowledgeBaseJobs: number;
      integrationDeliveries: number;
      dataJobs: number;
      executionSlots: number;
    }> {
      const settled = await settleLostJobs(deps, input);
      const executionSlots = await freeOrphanSlots(deps, input);
      const expiredKeys = await sweepExpiredKeys(deps.ds);
      if (expiredKeys) deps.log.info({ expiredKeys }, 'reconciler deleted expired idempotency keys');
      const oldAuditEvents = await sweepOldAuditEvents(deps.ds, deps.config.auditRetentionDays);
      if (oldAuditEvents)
        deps.log.info({ oldAuditEvents }, 'reconciler deleted audit events past AUDIT_RETENTION_DAYS');
      if (Object.values(settled).some((n) => n > 0) || executionSlots) {
        deps.log.warn({ settled, freedExecutionSlots: executionSlots }, 'reconciler settled orphaned records');
      }
      return { ...settled, executionSlots };
    },
  };
}
