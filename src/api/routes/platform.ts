// Configuration read and the OpenAPI document.
import { buildOpenApi } from '../openapi';
import { withProviderWords } from '../../services/provider-words';
import { route } from '../http/route';
import { defineSchema } from '../schemas/registry';

const NEUTRAL_KEYS = [
  'data_lake_objstore_bucket',
  'data_lake_objstore_region',
  'data_lake_objstore_url',
  'drive_data_connector_client_id',
];
const PROVIDER_KEYS = Object.keys(withProviderWords(Object.fromEntries(NEUTRAL_KEYS.map((k) => [k, ''])))).filter(
  (k) => !NEUTRAL_KEYS.includes(k),
);

// The interface's keys, and the same values under the keys of the generated client's model (provider words).
const ConfigSchema = defineSchema('Config', {
  type: 'object',
  required: [...NEUTRAL_KEYS, ...PROVIDER_KEYS],
  properties: Object.fromEntries([...NEUTRAL_KEYS, ...PROVIDER_KEYS].map((k) => [k, { type: 'string' }])),
});

route({
  operationId: 'GetConfig',
  method: 'get',
  path: '/config',
  tag: 'Billing and configuration',
  summary:
    "Public configuration of this installation (from the DATA_LAKE_* and DRIVE_* settings), under the interface's keys and, " +
    'with the same values, the provider-named keys the griptape-cloud-client parses (`data_lake_s3_*`, `google_drive_data_connector_client_id`).',
  responses: { 200: { description: 'Config', schema: ConfigSchema } },
  handler: async ({ deps }) => ({ status: 200, body: withProviderWords(deps.config.publicConfig) }),
});

let cached: unknown;
route({
  operationId: 'GetOpenApi',
  method: 'get',
  path: '/openapi.json',
  tag: 'Meta',
  auth: 'none',
  summary: 'This OpenAPI 3.1 document.',
  responses: { 200: { description: 'OpenAPI document', schema: { type: 'object' } } },
  handler: async ({ deps }) => {
    cached ??= buildOpenApi({ serverUrl: deps.config.publicBaseUrl, maxPageSize: deps.config.pageSizeMax });
    return { status: 200, body: cached };
  },
});
