// The `structure` source: runs the structure (`structure_id`, with `args`) as a structure run and takes its
// output artifacts as the items: a ListArtifact's elements, or the one TextArtifact. Item paths are
// `output/<n>.txt` (or `output/<n>-<artifact name>.txt`), stable across jobs, so an unchanged output is not
// rewritten and a shorter one removes the extra items.
import {
  derivedUuid,
  ItemError,
  outputArtifacts,
  runFailure,
  runStructureAndWait,
} from '../../transforms/structure-runs';
import type { SourceFactory } from './source';

const safeName = (name: string) =>
  name
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 80);

export const structureSource: SourceFactory = (config, deps) => {
  const texts = new Map<string, string>();
  return {
    async *list(ctx) {
      const run = await runStructureAndWait(deps, {
        runId: derivedUuid('structure-source', deps.jobId),
        organizationId: deps.connector.organization_id,
        createdBy: deps.connector.created_by,
        structureId: String(config.structure_id),
        args: (config.args as string[] | undefined) ?? [],
        signal: ctx.signal,
        beat: () => ctx.progress('structure run'),
      }).catch((err) => {
        if (err instanceof ItemError) throw Object.assign(new Error(err.message), { type: err.type });
        throw err;
      });
      if (run.status !== 'SUCCEEDED') {
        const failure = runFailure(run, 'The structure');
        throw Object.assign(new Error(failure.message), { type: 'StructureRunFailed' });
      }
      for (const [i, a] of outputArtifacts(run.output).entries()) {
        const name = a.name ? safeName(a.name) : '';
        const path = `output/${i + 1}${name ? `-${name}` : ''}.txt`;
        texts.set(path, a.text);
        yield {
          path,
          sourceUri: `structure://${String(config.structure_id)}/runs/${run.run_id}#${i + 1}`,
          ...(a.name ? { title: a.name } : {}),
          meta: { structure_run_id: run.run_id },
        };
      }
    },
    async read(item) {
      return { body: Buffer.from(texts.get(item.path) ?? '', 'utf8'), contentType: 'text/plain; charset=utf-8' };
    },
  };
};
