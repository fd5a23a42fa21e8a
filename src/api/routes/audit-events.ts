// The audit log (docs/people.md#audit-log): the organization's audited requests, newest first, filtered.
import { listAuditEvents } from '../../services/accounts/audit';
import { iso } from '../../persistence/scoped';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';

const nullableUuid = { type: ['string', 'null'], format: 'uuid' } as const;

const AuditEventSchema = defineSchema('AuditEvent', {
  type: 'object',
  required: [
    'audit_event_id',
    'created_at',
    'operation',
    'method',
    'path',
    'status',
    'user_id',
    'api_key_id',
    'session_id',
    'address',
    'detail',
  ],
  properties: {
    audit_event_id: uuid,
    created_at: timestamp,
    operation: { type: 'string', description: "The route's operationId, e.g. CreateSession or DeleteSecret." },
    method: { type: 'string' },
    path: { type: 'string', description: 'The path as requested, with its ids.' },
    status: { type: 'integer', description: "The answer's status: 4xx and 5xx are refused or failed requests." },
    user_id: { ...nullableUuid, description: 'Who: the user (of the session or the key); null for organization keys.' },
    api_key_id: { ...nullableUuid, description: 'The API key, when a key authenticated the request.' },
    session_id: { ...nullableUuid, description: "The person's cookie session, when one did." },
    address: { type: ['string', 'null'], description: "The client's address (the last X-Forwarded-For hop)." },
    detail: { type: 'object', description: 'What else: the email a sign-in tried, the name of a key or secret.' },
  },
});

route({
  operationId: 'ListAuditEvents',
  method: 'get',
  path: '/audit-events',
  tag: 'Audit',
  paged: true,
  summary:
    "The organization's audit log, newest first: sign-ins (refused ones too), sessions ended, API keys, secrets, " +
    'invites, integrations and connections changed, and every deletion, with who, when, from where and the status. ' +
    'Kept AUDIT_RETENTION_DAYS (400 by default).',
  query: {
    operation: { ...str(1, 100), description: 'Only this operationId.' },
    user_id: { ...uuid, description: "Only this user's." },
    api_key_id: { ...uuid, description: "Only this key's." },
    outcome: { type: 'string', enum: ['SUCCEEDED', 'FAILED'], description: 'FAILED: status 400 or above.' },
    created_after: timestamp,
    created_before: timestamp,
  },
  responses: {
    200: { description: 'Audit events', schema: pageOf('AuditEventList', 'audit_events', AuditEventSchema) },
  },
  handler: async ({ deps, caller, query, page }) => {
    const filters = {
      ...query,
      created_after: query.created_after ? new Date(query.created_after) : undefined,
      created_before: query.created_before ? new Date(query.created_before) : undefined,
    };
    const { rows, pagination } = await listAuditEvents(deps.ds, caller.organizationId, filters, page);
    const audit_events = rows.map((r) => ({ ...r, created_at: iso(r.created_at) }));
    return { status: 200, body: { audit_events, pagination } };
  },
});
