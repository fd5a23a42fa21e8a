// Connections to a code host account (OAuth). The access token is answered only by GetToken; a `codehost`
// code location may name a connection (`connection_id`) to clone a private repository with it.
import { iso } from '../../persistence/scoped';
import type { Connection } from '../../persistence/entities';
import {
  connectionAccessToken,
  createConnection,
  deleteConnection,
  listConnections,
  MAX_LISTED_CONNECTIONS,
} from '../../services/accounts/connections';
import { neutralMember, neutralWord } from '../../services/provider-words';
import { route } from '../http/route';
import { defineSchema, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Connections';

const fields = {
  connection_id: uuid,
  name: { type: 'string' },
  type: { type: 'string', description: '`codehost` (the clients may send `github`).' },
  created_by: { type: 'string' },
  created_at: timestamp,
} as const;
const ConnectionSchema = defineSchema('Connection', {
  type: 'object',
  required: ['connection_id', 'created_at', 'created_by', 'name', 'type', 'updated_at'],
  properties: { ...fields, updated_at: timestamp },
});
/** The create response omits `updated_at` (as the interface's does). */
const CreatedConnectionSchema = defineSchema('CreatedConnection', {
  type: 'object',
  required: ['connection_id', 'created_at', 'created_by', 'name', 'type'],
  properties: fields,
});

const present = (c: Connection) => ({
  connection_id: c.connection_id,
  name: c.name,
  type: c.type,
  created_by: c.created_by,
  created_at: iso(c.created_at),
  updated_at: iso(c.updated_at),
});

const codehostCredentials = {
  type: 'object',
  required: ['auth_code'],
  properties: {
    auth_code: {
      ...str(1, 1000),
      description: "The code the code host's OAuth authorization sent back to the app's callback (single use).",
    },
  },
} as const;

route({
  operationId: 'ListConnections',
  method: 'get',
  path: '/connections',
  tag: TAG,
  summary: `The organization's connections, newest first (at most ${MAX_LISTED_CONNECTIONS}; no pagination, as the interface says).`,
  query: { type: { ...str(1, 200), description: 'Only connections of this type (`codehost`; `github` is the same).' } },
  responses: {
    200: {
      description: 'Connections',
      schema: defineSchema('ConnectionList', {
        type: 'object',
        required: ['connections'],
        properties: { connections: { type: 'array', items: ConnectionSchema } },
      }),
    },
  },
  handler: async ({ deps, caller, query }) => {
    const type = query.type === undefined ? undefined : neutralWord(query.type as string);
    return { status: 200, body: { connections: (await listConnections(deps.ds, caller, type)).map(present) } };
  },
});

route({
  operationId: 'CreateConnection',
  method: 'post',
  path: '/connections',
  tag: TAG,
  audit: true,
  summary:
    "Connects a code host account: exchanges `credentials.codehost.auth_code` at the code host's OAuth token endpoint " +
    '(CODEHOST_OAUTH_*) and stores the tokens encrypted. 400 when the code host refuses the code (its error is ' +
    'quoted); 503 when connections are not configured on this installation or the code host cannot be reached.',
  body: defineSchema('CreateConnectionRequest', {
    type: 'object',
    required: ['type', 'credentials'],
    properties: {
      type: {
        type: 'string',
        enum: ['codehost', 'github'],
        description: "The only type served: `codehost` (`github`, the clients' word, is stored as `codehost`).",
      },
      name: str(1, 200),
      credentials: {
        type: 'object',
        description: 'Exactly one member: `codehost` (or `github`, the same).',
        minProperties: 1,
        maxProperties: 1,
        additionalProperties: false,
        properties: { codehost: codehostCredentials, github: codehostCredentials },
      },
    },
  }),
  bodyRequired: true,
  responses: { 201: { description: 'Connection', schema: CreatedConnectionSchema } },
  handler: async ({ deps, caller, body }) => {
    const connection = await createConnection(deps, caller, {
      type: neutralWord(body.type),
      name: body.name,
      // Exactly one member (the schema), `github` renamed `codehost` by neutralMember.
      credentials: neutralMember(body.credentials) as { codehost: { auth_code: string } },
    });
    const { updated_at: _omitted, ...created } = present(connection);
    return { status: 201, body: created };
  },
});

route({
  operationId: 'DeleteConnection',
  method: 'delete',
  path: '/connections/{connection_id}',
  tag: TAG,
  summary: 'Deletes a connection. 409 naming the structures (functions, tools) whose code location uses it.',
  params: { connection_id: uuid },
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteConnection(deps.ds, caller, params.connection_id);
    return { status: 204 };
  },
});

route({
  operationId: 'GetToken',
  method: 'get',
  path: '/connections/{connection_id}/access-token',
  tag: TAG,
  summary:
    "The connection's access token, refreshed first when it is about to expire. 409 when it expired and the code " +
    'host refuses to refresh it (create the connection again); 503 when the code host cannot be reached.',
  params: { connection_id: uuid },
  responses: {
    200: {
      description: 'Access token',
      schema: defineSchema('ConnectionAccessToken', {
        type: 'object',
        required: ['access_token'],
        properties: { access_token: { type: 'string' } },
      }),
    },
  },
  handler: async ({ deps, caller, params }) => {
    const token = await connectionAccessToken(deps, caller.organizationId, params.connection_id);
    return { status: 200, body: { access_token: token } };
  },
});
