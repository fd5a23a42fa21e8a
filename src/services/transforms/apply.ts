// Transforms: each item's text passes through the named structures in order, each as a structure run with
// the item as its first argument (a TextArtifact as JSON: `{"type":"TextArtifact","value":...,"name":...}`)
// followed by the transform's configured `args` (wire reference §3); the run's output (a TextArtifact, or a
// ListArtifact whose texts are joined by blank lines) replaces the item. A run that does not succeed, or
// answers nothing, is an error of that item. Shared by data jobs and knowledge base jobs (src/services/transforms).
import type { Transform } from '../../persistence/entities/data-connector';
import { MAX_ARG_BYTES } from '../code/runs/begin';
import {
  derivedUuid,
  ItemError,
  outputArtifacts,
  runFailure,
  runStructureAndWait,
  type StructureRunDeps,
} from './structure-runs';

export interface TransformContext {
  organizationId: string;
  createdBy: string;
  /** Makes the runs' ids: the same job, item and step find the same run again. */
  jobId: string;
  signal: AbortSignal;
  beat: () => void;
}

/** `text` after every transform, in order. Throws an ItemError naming the step that failed. */
export async function applyTransforms(
  deps: StructureRunDeps,
  transforms: Transform[],
  item: { name: string; text: string },
  ctx: TransformContext,
): Promise<string> {
  let text = item.text;
  for (const [i, t] of transforms.entries()) {
    const arg = JSON.stringify({ type: 'TextArtifact', value: text, name: item.name });
    if (Buffer.byteLength(arg) > MAX_ARG_BYTES) {
      throw new ItemError(
        'TooLarge',
        `Transform ${i + 1}: the item is larger than an argument may be (${MAX_ARG_BYTES} bytes)`,
      );
    }
    const run = await runStructureAndWait(deps, {
      runId: derivedUuid('transform', ctx.jobId, item.name, String(i)),
      organizationId: ctx.organizationId,
      createdBy: ctx.createdBy,
      structureId: t.structure.structure_id,
      args: [arg, ...(t.structure.args ?? [])],
      signal: ctx.signal,
      beat: ctx.beat,
    });
    if (run.status !== 'SUCCEEDED') throw runFailure(run, `Transform ${i + 1}`);
    const artifacts = outputArtifacts(run.output);
    if (!artifacts.length)
      throw new ItemError('TransformFailed', `Transform ${i + 1}: the structure run answered no output`);
    text = artifacts.map((a) => a.text).join('\n\n');
  }
  return text;
}
