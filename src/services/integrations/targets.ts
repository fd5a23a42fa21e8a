// What a delivery starts: a run of every linked structure (the three-argument convention) through the one
// run start path (startRun), and a run of every linked assistant with the message as input. Run ids are
// derived from the delivery, so a retried start (an activity retry, a second webhook call with the same
// Idempotency-Key) finds the run it started instead of starting another. A target that cannot start (deleted,
// never deployed) is an error of the delivery naming it; the others still start.
import type { Caller } from '../caller';
import { HttpError } from '../../errors';
import { Run } from '../../persistence/entities';
import type { EnvVar } from '../../persistence/entities/code-resource';
import type { DeliveryError, Integration } from '../../persistence/entities/integration';
import { createAssistantRun } from '../assistants/runs';
import { findStructure } from '../code/runs/structure-runs';
import { MAX_ARG_BYTES, startRun, type RunsDeps } from '../code/runs/begin';
import { derivedId } from './deliveries';

export interface Started {
  structure_run_ids: string[];
  assistant_run_ids: string[];
  errors: DeliveryError[];
}

/** The integration acting in its organization, as the user who created it. */
export const integrationCaller = (integration: Integration): Caller => ({
  organizationId: integration.organization_id,
  userId: null,
  apiKeyId: integration.integration_id,
  actor: integration.created_by,
  runId: null,
  // The platform acting for what the organization set up: a member starts runs and jobs.
  role: 'member',
});

const errorOf = (err: unknown, target: string): DeliveryError => {
  if (err instanceof HttpError) return { type: err.type, message: err.message, target };
  throw err;
};

const exists = async (deps: RunsDeps, runId: string) =>
  (await deps.ds.getRepository(Run).countBy({ run_id: runId })) > 0;

export async function startStructureRuns(
  deps: RunsDeps,
  caller: Caller,
  integration: Integration,
  deliveryId: string,
  args: string[],
  envVars: EnvVar[] = [],
): Promise<Started> {
  const out: Started = { structure_run_ids: [], assistant_run_ids: [], errors: [] };
  // Each argument is one argv string: the kernel refuses longer ones, so such a run could never start.
  const tooLong = args.findIndex((a) => Buffer.byteLength(a) > MAX_ARG_BYTES);
  if (tooLong >= 0) {
    for (const structureId of integration.structure_ids) {
      out.errors.push({
        type: 'ValidationError',
        message: `Argument ${tooLong + 1} of the three is over ${MAX_ARG_BYTES} bytes, more than one argument may hold`,
        target: `structure ${structureId}`,
      });
    }
    return out;
  }
  for (const structureId of integration.structure_ids) {
    const runId = derivedId(deliveryId, `structure:${structureId}`);
    try {
      if (!(await exists(deps, runId))) {
        const structure = await findStructure(deps.ds, caller, structureId);
        await startRun(deps, caller, structure, { args, envVars, input: null, runId });
      }
      out.structure_run_ids.push(runId);
    } catch (err) {
      out.errors.push(errorOf(err, `structure ${structureId}`));
    }
  }
  return out;
}

/** One run per linked assistant; `threadId` continues a conversation (the chat app's thread). */
export async function startAssistantRuns(
  deps: RunsDeps,
  caller: Caller,
  integration: Integration,
  deliveryId: string,
  input: string,
  threadId?: string,
): Promise<Started> {
  const out: Started = { structure_run_ids: [], assistant_run_ids: [], errors: [] };
  for (const assistantId of integration.assistant_ids) {
    const runId = derivedId(deliveryId, `assistant:${assistantId}`);
    try {
      if (!(await exists(deps, runId))) {
        await createAssistantRun(
          deps,
          caller,
          assistantId,
          { input, ...(threadId ? { thread_id: threadId } : {}) },
          runId,
        );
      }
      out.assistant_run_ids.push(runId);
    } catch (err) {
      out.errors.push(errorOf(err, `assistant ${assistantId}`));
    }
  }
  return out;
}
