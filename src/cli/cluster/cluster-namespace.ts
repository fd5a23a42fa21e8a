// The platform's namespace on the cluster: registered once (a second registration finds it and goes on), with
// the platform's custom search attributes (src/temporal/search-attributes.ts) added through the operator service.
// Other frontends learn both from the database within seconds (their namespace registry refreshes every 2 s), so
// the cluster counts as ready only once every frontend accepts a query that names the search attributes.
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes';

/** How long a workflow's history is kept after it closed; the dev server's default. */
export const NAMESPACE_RETENTION = '1 day';
const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
const ALREADY_EXISTS = 6; // the gRPC status code

export async function ensureNamespace(connection: Connection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(NAMESPACE_RETENTION),
    });
  } catch (err) {
    if (!isGrpcServiceError(err) || err.code !== ALREADY_EXISTS) throw err;
  }
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTES.filter((k) => !(k.name in (existing.customAttributes ?? {})));
  if (missing.length)
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, KEYWORD])),
    });
}

/** Whether this frontend serves the namespace with its search attributes: a visibility query naming them all. */
export async function servesNamespace(connection: Connection, namespace: string): Promise<boolean> {
  const query = SEARCH_ATTRIBUTES.map((k) => `${k.name} = 'probe'`).join(' AND ');
  try {
    await connection.workflowService.countWorkflowExecutions({ namespace, query });
    return true;
  } catch {
    return false;
  }
}
