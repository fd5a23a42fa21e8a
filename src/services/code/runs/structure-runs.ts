// Structure runs as the api sees them: create (its request checked, then begun as every code run: ./begin.ts),
// find, cancel.
// The api never writes a run's status: the workflow's activities do (lifecycle.ts).
import { DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import { assertSecretRefs } from '../../../persistence/scoped';
import { Run } from '../../../persistence/entities';
import { cancelRunAndWait } from './cancellation';
import { findCodeResource } from '../code-resources';
import { findRunOfKind } from './code-runs';
import type { RetryPolicy, RetryPolicyRequest } from '../../../temporal/retry-policy';
import { requestedPolicy } from './retries';
import { checkExecStrings, createRunOf, runEnvVars, type RequestEnvVar, type RunsDeps } from './begin';

export const findStructure = (ds: DataSource, caller: Caller, structureId: string) =>
  findCodeResource(ds, caller, 'structure', structureId);
export const findStructureRun = (ds: DataSource, caller: Caller, runId: string) =>
  findRunOfKind(ds, caller, 'structure', runId);

export async function createStructureRun(
  deps: RunsDeps,
  caller: Caller,
  structureId: string,
  input: {
    args: string[];
    env_vars: RequestEnvVar[];
    concurrency_key?: string;
    retry_policy?: RetryPolicyRequest | null;
  },
): Promise<Run> {
  const envVars = runEnvVars(input.env_vars);
  checkExecStrings(input.args, envVars, '/body');
  let retryPolicy: RetryPolicy | null | undefined;
  let policyError: unknown;
  try {
    retryPolicy =
      input.retry_policy === undefined ? undefined : requestedPolicy(input.retry_policy, '/body/retry_policy');
  } catch (err) {
    policyError = err;
  }
  // What needs the structure read first keeps the order of the answers: 404, an unknown secret, a bad policy.
  if (policyError || envVars.some((v) => v.source === 'secret_ref')) {
    await findStructure(deps.ds, caller, structureId);
    await assertSecretRefs(deps.ds, caller.organizationId, envVars, '/body/env_vars');
    if (policyError) throw policyError;
  }
  return createRunOf(deps, caller, 'structure', structureId, {
    args: input.args,
    envVars,
    input: null,
    concurrencyKey: input.concurrency_key,
    retryPolicy,
  });
}

/** Cancels a structure run: see cancelRunAndWait. */
export async function cancelStructureRun(deps: RunsDeps, caller: Caller, runId: string): Promise<Run> {
  return cancelRunAndWait(deps, caller, await findStructureRun(deps.ds, caller, runId));
}
