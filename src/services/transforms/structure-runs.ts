// Structure runs a data job or a knowledge base job starts (transforms, and the `structure` source of data
// connectors): begun as every code run is (../code/runs/begin.ts: workflow `structure-run-<uuid>` on the
// structure's latest SUCCEEDED deployment), with an id derived from the job and the purpose, so a retried activity (a worker
// killed mid-job) finds its run again instead of starting a second one. It executes in the job's execution slot
// (`inParentSlot`), as an assistant's tool runs do in the assistant run's. The caller heartbeats while it waits;
// a cancelled job cancels the run. The wait is the kernel's awaitEnd.
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import { CodeResource, Run } from '../../persistence/entities';
import { RUN_TERMINAL } from '../../persistence/entities/run';
import { awaitEnd } from '../../jobs/await-end';
import { RUN_JOB } from '../../jobs/kinds';
import type { RunUpdatesHub } from '../../persistence/run-updates-hub';
import { signalCancel } from '../code/runs/cancellation';
import { beginRun } from '../code/runs/begin';

export interface StructureRunDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
  /** Where the process listens for run updates: the wait wakes on them instead of polling. */
  runUpdates?: RunUpdatesHub;
}

/** An error of one item (becomes an entry of the job's `errors[]`). */
export class ItemError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** A uuid (v4 layout) derived from `parts`: the same parts, the same id. */
export function derivedUuid(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest();
  h[6] = (h[6] & 0x0f) | 0x40;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Runs the structure (or finds the run of a previous attempt) and waits for its end; answers the ended run. */
export async function runStructureAndWait(
  deps: StructureRunDeps,
  opts: {
    runId: string;
    organizationId: string;
    createdBy: string;
    structureId: string;
    args: string[];
    signal: AbortSignal;
    beat: () => void;
  },
): Promise<Run> {
  const runs = deps.ds.getRepository(Run);
  let run = await runs.findOneBy({ run_id: opts.runId });
  if (!run) {
    const structure = await deps.ds
      .getRepository(CodeResource)
      .findOneBy({ resource_id: opts.structureId, organization_id: opts.organizationId, kind: 'structure' });
    if (!structure) throw new ItemError('NotFound', `Structure ${opts.structureId} not found`);
    const begun = await beginRun(deps, { organizationId: opts.organizationId, actor: opts.createdBy }, structure, {
      runId: opts.runId,
      args: opts.args,
      envVars: [],
      input: null,
      inParentSlot: true,
      summary: `Run of structure ${structure.name} for a data job`,
    });
    if (!begun) throw new ItemError('NotDeployed', `Structure ${structure.name} has no successful deployment yet`);
    run = begun;
  }
  if (RUN_TERMINAL.includes(run.status)) return run;
  try {
    await awaitEnd(deps.ds, RUN_JOB, [opts.runId], { hub: deps.runUpdates, signal: opts.signal, heartbeat: opts.beat });
  } catch (err) {
    if (opts.signal.aborted) await signalCancel(deps.temporal, run, 'data job cancelled');
    throw err;
  }
  return runs.findOneByOrFail({ run_id: opts.runId });
}

interface Artifact {
  type?: string;
  value?: unknown;
  name?: string;
}

/** The artifacts of a run's output: a ListArtifact's elements, one TextArtifact, or a plain value. */
export function outputArtifacts(output: unknown): Array<{ name?: string; text: string }> {
  const one = (a: unknown): { name?: string; text: string } => {
    if (typeof a === 'string') return { text: a };
    const art = a as Artifact;
    if (art && typeof art === 'object' && 'value' in art) {
      const text = typeof art.value === 'string' ? art.value : JSON.stringify(art.value);
      return { ...(typeof art.name === 'string' ? { name: art.name } : {}), text };
    }
    return { text: JSON.stringify(a) };
  };
  if (output === null || output === undefined) return [];
  const art = output as Artifact;
  if (art && typeof art === 'object' && art.type === 'ListArtifact' && Array.isArray(art.value))
    return art.value.map(one);
  return [one(output)];
}

/** Why an ended run is not a success, as an item error. */
export function runFailure(run: Run, what: string): ItemError {
  const detail = run.status_detail as { error?: string; message?: string } | null;
  const why = detail?.error ?? detail?.message ?? '';
  return new ItemError(
    'TransformFailed',
    `${what}: structure run ${run.run_id} ended ${run.status}${why ? `: ${String(why).slice(0, 500)}` : ''}`,
  );
}
