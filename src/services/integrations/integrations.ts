// Integrations: CRUD (a deletion stops its deliveries' open work first). An integration links structures and assistants (ids of the organization, 409 naming a
// missing one) to a public handler, /api/integrations/{id}/handler, that outside senders call (handler.ts).
// Secret references are ids of the organization's secrets: values go in through /secrets and never come out.
// A chatapp or codehost_app created without a reference gets a secret of its own (a random placeholder that
// verifies nothing) for the user to fill with what the provider gives them.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { Caller } from '../caller';
import { badRequest, conflict } from '../../errors';
import { Integration, IntegrationDelivery, Secret } from '../../persistence/entities';
import { stopOpen } from '../../jobs/cancel';
import { INTEGRATION_DELIVERY } from '../../jobs/kinds';
import type { IntegrationSettings, IntegrationType } from '../../persistence/entities/integration';
import type { PageRequest } from '../../persistence/pagination';
import { assertIdsInOrg, findInOrg, pageInOrg } from '../../persistence/scoped';
import type { SecretBox } from '../../security/secret-box';
import { neutralMember, neutralWord } from '../provider-words';

/** The secret references each type has, in the order they are created when missing. */
export const SECRET_REFS: Record<IntegrationType, Array<keyof IntegrationSettings & string>> = {
  webhook: [],
  chatapp: ['bot_token_secret_ref', 'signing_secret_secret_ref'],
  codehost_app: ['private_key_secret_ref', 'webhook_secret_ref'],
};

/** Fields a request may set per type (anything else in the member is ignored). */
const FIELDS: Record<IntegrationType, Array<keyof IntegrationSettings & string>> = {
  webhook: ['disable_api_key_param'],
  chatapp: ['app_name', 'app_display_name', 'app_description', ...SECRET_REFS.chatapp],
  codehost_app: ['app_id', ...SECRET_REFS.codehost_app],
};

export interface IntegrationRequest {
  name?: string;
  description?: string;
  type?: string;
  config?: Record<string, Record<string, unknown>>;
  structure_ids?: string[];
  assistant_ids?: string[];
}

export const findIntegration = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, Integration, caller.organizationId, { integration_id: id }, 'Integration');

export const listIntegrations = (ds: DataSource, caller: Caller, page: PageRequest) =>
  pageInOrg(ds, Integration, caller.organizationId, page, {}, { created_at: 'DESC', integration_id: 'DESC' });

/** The config member of a request, in the interface's words, checked against the type. */
function memberOf(
  type: IntegrationType,
  config: IntegrationRequest['config'],
  stored = false,
): IntegrationSettings | undefined {
  if (!config) return undefined;
  const neutral = neutralMember(config);
  const [name] = Object.keys(neutral);
  if (name !== type) {
    // Against the request's own type a malformed request; against the stored type a conflict with the record.
    const message = `config must have one member named like the integration's type, ${type}`;
    throw stored ? conflict(message) : badRequest(message, '/body/config');
  }
  const given = (neutral[name] ?? {}) as Record<string, unknown>;
  return Object.fromEntries(FIELDS[type].filter((f) => given[f] !== undefined).map((f) => [f, given[f]]));
}

async function checkReferences(
  ds: DataSource,
  organizationId: string,
  settings: IntegrationSettings,
  req: IntegrationRequest,
) {
  await assertIdsInOrg(ds, 'structure', organizationId, req.structure_ids ?? [], '/body/structure_ids');
  await assertIdsInOrg(ds, 'assistant', organizationId, req.assistant_ids ?? [], '/body/assistant_ids');
  for (const [field, value] of Object.entries(settings)) {
    if (field.endsWith('_secret_ref') || field.endsWith('_ref'))
      await assertIdsInOrg(ds, 'secret', organizationId, [value as string], `/body/config/${field}`);
  }
}

/** A placeholder secret for each missing reference (random: nothing verifies until the user sets the real value). */
async function fillSecretRefs(em: EntityManager, box: SecretBox, integration: Integration) {
  for (const field of SECRET_REFS[integration.type]) {
    const config = integration.config as Record<string, unknown>;
    if (config[field]) continue;
    const secretId = randomUUID();
    await em.getRepository(Secret).insert({
      secret_id: secretId,
      organization_id: integration.organization_id,
      name: `integration-${integration.integration_id}-${field.replace(/_secret_ref$|_ref$/, '')}`,
      value_encrypted: box.seal(randomBytes(32).toString('base64url'), secretId),
      last_used: null,
      created_by: integration.created_by,
      created_at: integration.created_at,
      updated_at: integration.created_at,
    });
    config[field] = secretId;
  }
}

export async function createIntegration(
  ds: DataSource,
  box: SecretBox,
  caller: Caller,
  req: IntegrationRequest & { name: string; type: string; config: Record<string, Record<string, unknown>> },
): Promise<Integration> {
  const type = neutralWord(req.type) as IntegrationType;
  const settings = memberOf(type, req.config)!;
  await checkReferences(ds, caller.organizationId, settings, req);
  const now = new Date();
  const integration: Integration = {
    integration_id: randomUUID(),
    organization_id: caller.organizationId,
    name: req.name,
    description: req.description ?? '',
    type,
    config: settings,
    structure_ids: [...new Set(req.structure_ids ?? [])],
    assistant_ids: [...new Set(req.assistant_ids ?? [])],
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  return ds.transaction(async (em) => {
    await fillSecretRefs(em, box, integration);
    await em.getRepository(Integration).insert(integration);
    return integration;
  });
}

/** Changes the given fields; a config member is merged into the stored one. The type cannot change (400). */
export async function updateIntegration(
  ds: DataSource,
  caller: Caller,
  id: string,
  req: IntegrationRequest,
): Promise<Integration> {
  const integration = await findIntegration(ds, caller, id);
  if (req.type !== undefined && neutralWord(req.type) !== integration.type) {
    throw conflict(`The type of an integration cannot change (it is ${integration.type})`);
  }
  const settings = memberOf(integration.type, req.config, true) ?? {};
  await checkReferences(ds, caller.organizationId, settings, req);
  if (req.name !== undefined) integration.name = req.name;
  if (req.description !== undefined) integration.description = req.description;
  if (req.structure_ids !== undefined) integration.structure_ids = [...new Set(req.structure_ids)];
  if (req.assistant_ids !== undefined) integration.assistant_ids = [...new Set(req.assistant_ids)];
  integration.config = { ...integration.config, ...settings };
  integration.updated_at = new Date();
  await ds.getRepository(Integration).save(integration);
  return integration;
}

/**
 * Deletes the integration and its delivery log. Its deliveries' open work is cancelled first, through the job
 * kernel (stopOpen: their workflows record CANCELLED, bounded wait); runs and deployments they started go on.
 */
export async function deleteIntegration(
  deps: { ds: DataSource; temporal: Client },
  caller: Caller,
  id: string,
): Promise<void> {
  const integration = await findIntegration(deps.ds, caller, id);
  const open = await deps.ds
    .getRepository(IntegrationDelivery)
    .findBy({ integration_id: integration.integration_id, status: In([...INTEGRATION_DELIVERY.open]) });
  await stopOpen(deps, INTEGRATION_DELIVERY, open, caller.actor);
  await deps.ds.getRepository(Integration).delete({ integration_id: integration.integration_id });
}
