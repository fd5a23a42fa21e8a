// Secrets: values are sealed with AES-256-GCM (bound to the secret id) and never returned.
import { randomUUID } from 'node:crypto';
import { Secret } from '../../persistence/entities';
import { findInOrg, iso, pageInOrg } from '../../persistence/scoped';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Secrets';
/** Secret values up to 64 KiB (private keys, certificates). */
const MAX_SECRET_VALUE = 65_536;

const SecretSchema = defineSchema('Secret', {
  type: 'object',
  required: ['secret_id', 'name', 'organization_id', 'created_at', 'updated_at', 'last_used'],
  properties: {
    secret_id: uuid,
    name: { type: 'string' },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
    last_used: {
      ...timestamp,
      description:
        'When a run last resolved it (a `secret_ref` env var); its creation time until then, as for API keys.',
    },
  },
});

const present = (s: Secret) => ({
  secret_id: s.secret_id,
  name: s.name,
  organization_id: s.organization_id,
  created_by: s.created_by,
  created_at: iso(s.created_at),
  updated_at: iso(s.updated_at),
  // The generated client needs a timestamp here (no null, no absence).
  last_used: iso(s.last_used ?? s.created_at),
});

route({
  operationId: 'ListSecrets',
  method: 'get',
  path: '/secrets',
  tag: TAG,
  paged: true,
  summary: "The organization's secrets (names only).",
  responses: { 200: { description: 'Secrets', schema: pageOf('SecretList', 'secrets', SecretSchema) } },
  handler: async ({ deps, caller, page }) => {
    const { items, pagination } = await pageInOrg(deps.ds, Secret, caller.organizationId, page);
    return { status: 200, body: { secrets: items.map(present), pagination } };
  },
});

route({
  operationId: 'CreateSecret',
  method: 'post',
  path: '/secrets',
  tag: TAG,
  audit: (b) => ({ name: b.name }),
  summary: `Stores a secret (name unique per organization, value up to ${MAX_SECRET_VALUE} characters).`,
  body: defineSchema('CreateSecretRequest', {
    type: 'object',
    required: ['name', 'value'],
    properties: { name: str(1, 200), value: str(1, MAX_SECRET_VALUE) },
  }),
  bodyRequired: true,
  responses: { 201: { description: 'Secret', schema: SecretSchema } },
  handler: async ({ deps, caller, body }) => {
    const id = randomUUID();
    const now = new Date();
    const secret = await deps.ds.getRepository(Secret).save({
      secret_id: id,
      organization_id: caller.organizationId,
      name: body.name,
      value_encrypted: deps.box.seal(body.value, id),
      last_used: null,
      created_by: caller.actor,
      created_at: now,
      updated_at: now,
    });
    return { status: 201, body: present(secret) };
  },
});

route({
  operationId: 'GetSecret',
  method: 'get',
  path: '/secrets/{secret_id}',
  tag: TAG,
  summary: 'A secret (never its value).',
  params: { secret_id: uuid },
  responses: { 200: { description: 'Secret', schema: SecretSchema } },
  handler: async ({ deps, caller, params }) => {
    const secret = await findInOrg(deps.ds, Secret, caller.organizationId, { secret_id: params.secret_id }, 'Secret');
    return { status: 200, body: present(secret) };
  },
});

route({
  operationId: 'UpdateSecret',
  method: 'patch',
  path: '/secrets/{secret_id}',
  tag: TAG,
  audit: (b) => ({ name: b.name }),
  summary: 'Renames a secret and/or replaces its value.',
  params: { secret_id: uuid },
  body: defineSchema('UpdateSecretRequest', {
    type: 'object',
    properties: { name: str(1, 200), value: str(1, MAX_SECRET_VALUE) },
  }),
  responses: { 200: { description: 'Secret', schema: SecretSchema } },
  handler: async ({ deps, caller, params, body }) => {
    const secret = await findInOrg(deps.ds, Secret, caller.organizationId, { secret_id: params.secret_id }, 'Secret');
    if (body.name !== undefined) secret.name = body.name;
    if (body.value !== undefined) secret.value_encrypted = deps.box.seal(body.value, secret.secret_id);
    secret.updated_at = new Date();
    await deps.ds.getRepository(Secret).save(secret);
    return { status: 200, body: present(secret) };
  },
});

route({
  operationId: 'DeleteSecret',
  method: 'delete',
  path: '/secrets/{secret_id}',
  tag: TAG,
  summary: 'Deletes a secret.',
  params: { secret_id: uuid },
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    const secret = await findInOrg(deps.ds, Secret, caller.organizationId, { secret_id: params.secret_id }, 'Secret');
    await deps.ds.getRepository(Secret).delete({ secret_id: secret.secret_id });
    return { status: 204 };
  },
});
