// The worker's side of a tool call that needs approval (docs/waitpoints.md): the assistant run workflow opens a
// waitpoint for the model's call of a tool that requires approval (a row, an event, the run's status_detail saying
// it waits), waits for the `waitpointCompleted` signal or the approval's timeout holding nothing, then settles
// it: COMPLETED as the signal said, or TIMED_OUT (a refusal). Both steps are idempotent, so retried activities
// are harmless; the run's status stays RUNNING throughout.
import type { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { ApprovalDecision, OpenedApproval, WaitpointCompletedSignal } from '../../temporal/contracts';

export type { ApprovalDecision, OpenedApproval };
import type { ToolApprovalSubject, WaitpointCompletion } from '../../persistence/entities/waitpoint';
import { Waitpoint } from '../../persistence/entities/waitpoint';
import { CodeResource } from '../../persistence/entities/code-resource';
import { appendEvents } from '../code/runs/state';
import { transition } from '../../jobs/transition';
import { WAITPOINT_RECORD } from '../../jobs/kinds';
import { loadAssistantRun, toolCallOf } from '../assistants/transcript';

export const WAITING_FOR_APPROVAL = 'WaitingForApproval';

/** The run's status_detail from its waitpoints still waiting: which, or null once none is. */
async function markWaiting(em: EntityManager, runId: string): Promise<void> {
  const waiting: Array<{ waitpoint_id: string; function_name: string }> = await em.query(
    `SELECT waitpoint_id, subject->>'function_name' AS function_name FROM waitpoints
      WHERE run_id = $1 AND status = 'WAITING' ORDER BY created_at, waitpoint_id`,
    [runId],
  );
  const detail = waiting.length
    ? {
        reason: WAITING_FOR_APPROVAL,
        message: `Waiting for approval of ${waiting.map((w) => w.function_name).join(', ')}`,
        waitpoint_ids: waiting.map((w) => w.waitpoint_id),
      }
    : null;
  // Not a status change: what the run says of itself while RUNNING (cleared once nothing waits).
  await em.query(
    `UPDATE runs SET status_detail = $2::jsonb, updated_at = now()
      WHERE run_id = $1 AND status = 'RUNNING' AND (status_detail IS NULL OR status_detail->>'reason' = $3)`,
    [runId, detail === null ? null : JSON.stringify(detail), WAITING_FOR_APPROVAL],
  );
}

/**
 * Opens the waitpoint of call `toolCallId` of step `step` when its tool requires approval (null otherwise, and
 * for a call whose arguments are no JSON object: planChildRun answers that). Idempotent per `waitpointId`.
 */
export async function openToolApproval(
  ds: DataSource,
  defaultTimeoutSeconds: number,
  input: { runId: string; step: number; toolCallId: string; waitpointId: string },
): Promise<OpenedApproval | null> {
  const loaded = await loadAssistantRun(ds, input.runId);
  if (!loaded) return null;
  const { run, details } = loaded;
  const call = toolCallOf(details, input.step, input.toolCallId);
  const target = details.tool_definitions?.find((d) => d.name === call?.name)?.target;
  if (!call || target?.kind !== 'tool' || !target.approval) return null;
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    return null;
  }
  const timeoutSeconds = target.approval.timeoutSeconds ?? defaultTimeoutSeconds;
  const tool = await ds.getRepository(CodeResource).findOneBy({ resource_id: target.id });
  const subject: ToolApprovalSubject = {
    tool_id: target.id,
    tool_name: tool?.name ?? target.id,
    activity: target.activity,
    function_name: call.name,
    tool_call_id: call.id,
    step: input.step,
    arguments: args,
  };
  await ds.transaction(async (em) => {
    const now = new Date();
    const inserted = await em
      .createQueryBuilder()
      .insert()
      .into(Waitpoint)
      .values({
        waitpoint_id: input.waitpointId,
        organization_id: run.organization_id,
        run_id: run.run_id,
        kind: 'tool_approval',
        status: 'WAITING',
        subject,
        timeout_seconds: timeoutSeconds,
        expires_at: new Date(now.getTime() + timeoutSeconds * 1000),
        completion: null,
        completed_by: null,
        completed_at: null,
        idempotency_key: null,
        created_by: run.created_by,
        created_at: now,
        updated_at: now,
      } as QueryDeepPartialEntity<Waitpoint>)
      .orIgnore()
      .execute();
    if (!inserted.identifiers.length) return; // a retried activity: opened already
    await appendEvents(em, run.run_id, [
      {
        type: 'AssistantToolCallWaitingForApproval',
        origin: 'SYSTEM',
        payload: {
          tool_call_id: call.id,
          name: call.name,
          tool_id: target.id,
          waitpoint_id: input.waitpointId,
          arguments: args,
          expires_at: new Date(now.getTime() + timeoutSeconds * 1000).toISOString(),
        },
      },
    ]);
    await markWaiting(em, run.run_id);
  });
  return { waitpointId: input.waitpointId, timeoutSeconds, ...(target.approval.notify ? { notify: true } : {}) };
}

/**
 * Settles the waitpoint as the signal said (`completion`), or TIMED_OUT when none came in time; answers what
 * the row says (a retry, or a run ended meanwhile, answers the row as it is). Idempotent.
 */
export async function settleToolApproval(
  ds: DataSource,
  input: { runId: string; waitpointId: string; completion: WaitpointCompletedSignal | null },
): Promise<ApprovalDecision> {
  return ds.transaction(async (em) => {
    const { completion: c } = input;
    const recorded: WaitpointCompletion | undefined = c
      ? {
          approved: c.approved,
          ...(c.arguments ? { arguments: c.arguments } : {}),
          ...(c.reason ? { reason: c.reason } : {}),
        }
      : undefined;
    const moved = (await transition(
      em,
      WAITPOINT_RECORD,
      input.waitpointId,
      c ? 'COMPLETED' : 'TIMED_OUT',
      c
        ? { completion: recorded, completed_by: c.completedBy }
        : { completion: { approved: false, reason: 'No one approved the call in time' } },
    )) as Waitpoint | undefined;
    const row = moved ?? (await em.getRepository(Waitpoint).findOneBy({ waitpoint_id: input.waitpointId }));
    if (!row) return { approved: false, refusal: 'Its waitpoint no longer exists' };
    if (moved) {
      const approved = row.status === 'COMPLETED' && row.completion?.approved === true;
      await appendEvents(em, input.runId, [
        {
          type: approved ? 'AssistantToolCallApproved' : 'AssistantToolCallRejected',
          origin: 'SYSTEM',
          payload: {
            tool_call_id: (row.subject as ToolApprovalSubject).tool_call_id,
            waitpoint_id: row.waitpoint_id,
            status: row.status,
            completed_by: row.completed_by,
            ...(row.completion?.reason ? { reason: row.completion.reason } : {}),
            ...(row.completion?.arguments ? { arguments: row.completion.arguments } : {}),
          },
        },
      ]);
      await markWaiting(em, input.runId);
    }
    return decisionOf(row);
  });
}

function decisionOf(row: Waitpoint): ApprovalDecision {
  const name = (row.subject as ToolApprovalSubject).function_name;
  if (row.status === 'COMPLETED' && row.completion?.approved)
    return { approved: true, ...(row.completion.arguments ? { arguments: row.completion.arguments } : {}) };
  if (row.status === 'TIMED_OUT')
    return { approved: false, refusal: `The call of ${name} was not approved within ${row.timeout_seconds} s` };
  const by = row.completed_by ? ` by ${row.completed_by}` : '';
  const reason = row.completion?.reason ? `: ${row.completion.reason}` : '';
  return { approved: false, refusal: `The call of ${name} was rejected${by}${reason}` };
}
