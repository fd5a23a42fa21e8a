// Configuration read and the OpenAPI document.
import { buildOpenApi } from '../openapi';
import { route } from '../http/route';
import { defineSchema } from '../schemas/registry';

const ConfigSchema = defineSchema('Config', {
  type: 'object',
  required: ['data_lake_objstore_bucket', 'data_lake_objstore_region', 'data_lake_objstore_url', 'drive_data_connector_client_id'],
  properties: {
    data_lake_objstore_bucket: { type: 'string' },
    data_lake_objstore_region: { type: 'string' },
    data_lake_objstore_url: { type: 'string' },
    drive_data_connector_client_id: { type: 'string' },
  },
});

route({
  operationId: 'GetConfig', method: 'get', path: '/config', tag: 'Billing and configuration',
  summary: 'Public configuration of this installation (from the DATA_LAKE_* and DRIVE_* settings).',
  responses: { 200: { description: 'Config', schema: ConfigSchema } },
  handler: async ({ deps }) => ({ status: 200, body: deps.config.publicConfig }),
});

let cached: unknown;
route({
  operationId: 'GetOpenApi', method: 'get', path: '/openapi.json', tag: 'Meta', auth: 'none',
  summary: 'This OpenAPI 3.1 document.',
  responses: { 200: { description: 'OpenAPI document', schema: { type: 'object' } } },
  handler: async ({ deps }) => {
    cached ??= buildOpenApi({ serverUrl: deps.config.publicBaseUrl, maxPageSize: deps.config.pageSizeMax });
    return { status: 200, body: cached };
  },
});
