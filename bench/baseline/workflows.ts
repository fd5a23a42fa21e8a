// The bare baselines of a run: one workflow, one activity that spawns the program and waits for it. No
// database, no status writes, no events, logs, credentials or heartbeats: what Temporal and a process spawn
// cost by themselves (bare), and with the sandbox chain of our runs (isolated bare). Imports only @temporalio/workflow and types, like workflows/.
import { proxyActivities } from '@temporalio/workflow';
import type { BareActivities, BareCommand, BareFunctionCall, BareRunResult } from './activities';

const { spawnProgram, spawnFunction, spawnIsolatedProgram, spawnIsolatedFunction } = proxyActivities<BareActivities>({
  startToCloseTimeout: '10 minutes',
});

export async function bareRunWorkflow(command: BareCommand): Promise<BareRunResult> {
  return spawnProgram(command);
}

export async function bareFunctionWorkflow(call: BareFunctionCall): Promise<unknown> {
  return spawnFunction(call);
}

export async function isolatedRunWorkflow(command: BareCommand): Promise<BareRunResult> {
  return spawnIsolatedProgram(command);
}

export async function isolatedFunctionWorkflow(call: BareFunctionCall): Promise<unknown> {
  return spawnIsolatedFunction(call);
}
