import { Client, Connection } from '@temporalio/client';
import { Config, temporalConnectionOptions } from '../config';
import type { Logger } from '../logger';
import { SEARCH_ATTRIBUTES } from './search-attributes';
import { clientTracingInterceptors } from '../observability/temporal-tracing';

export async function connectClient(config: Config): Promise<Client> {
  const connection = await Connection.connect(temporalConnectionOptions(config));
  return new Client({ connection, namespace: config.temporal.namespace, interceptors: clientTracingInterceptors() });
}

/**
 * Registers the search attributes on a server we did not start ourselves (TEMPORAL_ADDRESS). The dev
 * server of `npm start` gets them as flags. Where the operator API is not allowed (Temporal Cloud),
 * add them in the cloud console; we only warn.
 */
export async function ensureSearchAttributes(client: Client, log: Logger): Promise<void> {
  const { namespace } = client.options;
  try {
    const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
    const missing = SEARCH_ATTRIBUTES.filter((k) => !(k.name in (existing.customAttributes ?? {})));
    if (!missing.length) return;
    await client.connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, 2 /* INDEXED_VALUE_TYPE_KEYWORD */])),
    });
    log.info({ added: missing.map((k) => k.name) }, 'registered Temporal search attributes');
  } catch (err) {
    log.warn(
      { err },
      'could not register Temporal search attributes; add them on the server: ' +
        SEARCH_ATTRIBUTES.map((k) => `${k.name}=Keyword`).join(', '),
    );
  }
}
