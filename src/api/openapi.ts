// Assembles the OpenAPI 3.1 document from the declared routes and the schema registry.
import { allRoutes, querySchemaOf } from './http/route';
import { allSchemas, ErrorBody } from './schemas/registry';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH } from '../jobs/idempotency';
import { roleNeeded } from './http/route-roles';

const idempotencyKeyParameter = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
  description:
    'Makes the create happen once per key (in this organization, operation and target) while the key lives ' +
    '(IDEMPOTENCY_TTL, 24 h by default): a repeat answers 200 with the first record as it is now and ' +
    '`Idempotent-Replayed: true`; the same key with another body is 422 IdempotencyKeyReusedError.',
};
const additionKeyParameter = {
  ...idempotencyKeyParameter,
  description:
    'Makes the addition happen once per key (in this organization, operation and target) while the key lives ' +
    '(IDEMPOTENCY_TTL, 24 h by default): a repeat adds nothing and answers as the first did, with ' +
    '`Idempotent-Replayed: true`; the same key with another body is 422 IdempotencyKeyReusedError. Lets a ' +
    'client retry a request whose answer it never got (a 502 from a load balancer whose api died) safely.',
};
const replayedHeader = {
  [IDEMPOTENT_REPLAYED_HEADER]: {
    description: '`true` when this answers a repeat of an Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

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
      ...(r.idempotent ? [idempotencyKeyParameter] : r.idempotentAddition ? [additionKeyParameter] : []),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries(r.responses)) {
      responses[status] = {
        description: resp.description,
        ...(resp.schema ? { content: { [resp.contentType ?? 'application/json']: { schema: resp.schema } } } : {}),
      };
    }
    if (r.idempotent) {
      // A repeat answers 200 in the shape of the create's first answer.
      const first = r.responses[200] ?? Object.values(r.responses)[0];
      responses[200] = {
        description: r.responses[200]?.description ?? `${first.description}; 200 when repeating an Idempotency-Key`,
        ...(first.schema ? { content: { [first.contentType ?? 'application/json']: { schema: first.schema } } } : {}),
        headers: replayedHeader,
      };
    }
    if (r.idempotentAddition) {
      for (const status of Object.keys(r.responses).filter((s) => s.startsWith('2')))
        responses[status] = { ...(responses[status] as object), headers: replayedHeader };
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
          ? { security: [{ bearer: [] }, { apiKeyQuery: [] }, { session: [] }] }
          : {}),
      // The least role of the caller (src/api/http/route-roles.ts); a public route has none.
      ...(r.auth === 'none' ? {} : { 'x-tarmac-role': roleNeeded(r) }),
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
    security: [{ bearer: [] }, { session: [] }],
    paths,
    components: {
      schemas: allSchemas(),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'API key' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'tarmac_session',
          description:
            "A person's session (POST /api/sessions); POST, PUT, PATCH and DELETE also need X-CSRF-Token (docs/people.md)",
        },
      },
    },
  };
}
