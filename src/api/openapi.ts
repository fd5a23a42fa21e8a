// Assembles the OpenAPI 3.1 document from the declared routes and the schema registry.
import { allRoutes, querySchemaOf } from './http/route';
import { allSchemas, ErrorBody } from './schemas/registry';

export function buildOpenApi(opts: { serverUrl: string; maxPageSize: number }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of allRoutes()) {
    const parameters = [
      ...Object.entries(r.params ?? {}).map(([name, schema]) => ({
        name,
        in: 'path',
        required: true,
        schema,
        ...(name === r.greedyParam ? { description: 'May contain `/`; sent unencoded.' } : {}),
      })),
      ...Object.entries(querySchemaOf(r, opts.maxPageSize)).map(([name, schema]) => ({
        name,
        in: 'query',
        required: false,
        schema,
        ...(schema.type === 'array'
          ? { style: 'form', explode: true, description: 'Comma-separated or repeated.' }
          : {}),
      })),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries(r.responses)) {
      responses[status] = {
        description: resp.description,
        ...(resp.schema ? { content: { [resp.contentType ?? 'application/json']: { schema: resp.schema } } } : {}),
      };
    }
    responses.default = {
      description: 'Error: `{type, errors}`',
      content: { 'application/json': { schema: ErrorBody } },
    };
    const op: Record<string, unknown> = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      parameters,
      responses,
      ...(r.auth === 'none'
        ? { security: [] }
        : r.auth === 'apiKeyOrQuery'
          ? { security: [{ bearer: [] }, { apiKeyQuery: [] }] }
          : {}),
    };
    if (r.body) {
      op.requestBody = { required: !!r.bodyRequired, content: { 'application/json': { schema: r.body } } };
    } else if (r.rawBody) {
      // Not required: an empty body is an empty argument (webhook) or an empty file (upload).
      op.requestBody = {
        required: false,
        description: r.rawBody.description,
        content: { [r.rawBody.contentType]: { schema: {} } },
      };
    }
    (paths[`/api${r.path}`] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tarmac API',
      version: '0.1.0',
      description:
        'Self-hostable platform for AI applications. Errors are `{type, errors}`; see docs/api-conventions.md.',
    },
    servers: [{ url: opts.serverUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: allSchemas(),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'API key' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
      },
    },
  };
}
