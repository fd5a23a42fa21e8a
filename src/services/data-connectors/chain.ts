// The chain from the data lake to knowledge bases: when a data job SUCCEEDS, every knowledge base of the
// organization with an asset path that overlaps the connector's prefix (`<bucket_id>/` or any prefix of
// `<bucket_id>/data-connectors/<connector id>/`, or a path inside it) gets a knowledge base job, as if its
// owner had asked; one whose job is still open is skipped (that job reads the lake as it is now anyway).
import type { DataSource } from 'typeorm';
import type { Client } from '@temporalio/client';
import type { Config } from '../../config';
import { HttpError } from '../../errors';
import { DataConnector } from '../../persistence/entities/data-connector';
import { KnowledgeBase } from '../../persistence/entities/knowledge-base';
import { createJob } from '../knowledge/jobs';
import { splitAssetPath } from '../knowledge/knowledge-bases';
import { connectorPrefix } from './connectors';

/** Whether a knowledge base asset path covers (part of) what the connector writes. */
export function coversConnector(assetPath: string, connector: Pick<DataConnector, 'bucket_id' | 'data_connector_id'>) {
  const { bucketId, name, prefix } = splitAssetPath(assetPath);
  if (bucketId !== connector.bucket_id.toLowerCase()) return false;
  const own = connectorPrefix(connector.data_connector_id);
  return prefix ? own.startsWith(name) || name.startsWith(own) : name.startsWith(own);
}

/** Starts the knowledge base jobs of the chain; answers the job ids started. */
export async function chainKnowledgeBaseJobs(
  deps: { ds: DataSource; temporal: Client; config: Config },
  connector: DataConnector,
  dataJobId: string,
): Promise<string[]> {
  const kbs = await deps.ds.getRepository(KnowledgeBase).findBy({ organization_id: connector.organization_id });
  const started: string[] = [];
  for (const kb of kbs.filter((k) => k.asset_paths.some((p) => coversConnector(p, connector)))) {
    try {
      const job = await createJob(
        deps,
        {
          organizationId: connector.organization_id,
          userId: null,
          apiKeyId: `data-job:${dataJobId}`,
          actor: `data-job:${dataJobId}`,
          runId: null,
          // The platform acting for what the organization set up: a member starts runs and jobs.
          role: 'member',
        },
        kb.knowledge_base_id,
      );
      started.push(job.knowledge_base_job_id);
    } catch (err) {
      // 409: a job of that knowledge base is open; 404: it was deleted meanwhile.
      if (!(err instanceof HttpError) || ![404, 409].includes(err.status)) throw err;
    }
  }
  return started;
}
