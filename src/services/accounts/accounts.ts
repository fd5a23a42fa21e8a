// Organizations, users and their API keys.
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { newApiKeyValue, hashApiKey } from '../../security/api-key-values';
import { ApiKey, Bucket, Membership, Organization, User } from '../../persistence/entities';
import { insertRow } from '../../persistence/direct-sql';
import type { Role } from './roles';

/** The organization with its default bucket; `em` must be a transaction (the two rows name each other). */
export async function createOrganization(
  em: EntityManager,
  input: { name: string; createdBy: string },
): Promise<Organization> {
  const now = new Date();
  const organization = await em.getRepository(Organization).save({
    organization_id: randomUUID(),
    name: input.name,
    entitlement: 'FREE',
    default_bucket_id: randomUUID(),
    created_by: input.createdBy,
    created_at: now,
    updated_at: now,
  });
  await em.getRepository(Bucket).insert({
    bucket_id: organization.default_bucket_id,
    organization_id: organization.organization_id,
    name: 'default',
    created_by: input.createdBy,
    created_at: now,
    updated_at: now,
  });
  return organization;
}

/** Finds the user with this email (case-insensitive) or creates one. */
export async function upsertUserByEmail(em: EntityManager, email: string, name?: string): Promise<User> {
  const normalized = email.trim().toLowerCase();
  const now = new Date();
  await em.query(
    `INSERT INTO users (user_id, email, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (email) DO NOTHING`,
    [randomUUID(), normalized, name ?? null, now],
  );
  return em.getRepository(User).findOneByOrFail({ email: normalized });
}

/** Makes the user a member with `role`; a user who is one already keeps the role they have. */
export async function addMember(em: EntityManager, organizationId: string, userId: string, role: Role): Promise<void> {
  await em.query(
    `INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, $3, now())
     ON CONFLICT DO NOTHING`,
    [organizationId, userId, role],
  );
}

export async function isMember(
  ds: DataSource | EntityManager,
  organizationId: string,
  userId: string,
): Promise<boolean> {
  return (await ds.getRepository(Membership).countBy({ organization_id: organizationId, user_id: userId })) > 0;
}

/**
 * Creates a key; the returned `value` exists only here. With `runId`, the key acts on that run only. An
 * organization key (no user) has its own `role`; a user key acts with its user's.
 */
export async function createApiKey(
  em: EntityManager | DataSource,
  input: {
    organizationId: string;
    userId: string | null;
    name: string;
    createdBy: string;
    runId?: string;
    role?: Role;
  },
): Promise<{ key: ApiKey; value: string }> {
  const value = newApiKeyValue();
  const now = new Date();
  const key = await insertRow(em instanceof DataSource ? em.manager : em, ApiKey, {
    api_key_id: randomUUID(),
    organization_id: input.organizationId,
    user_id: input.userId,
    name: input.name,
    key_hash: hashApiKey(value),
    run_id: input.runId ?? null,
    role: input.userId === null && !input.runId ? (input.role ?? 'member') : null,
    active: true,
    // Never used yet: clients expect a timestamp here, so it starts at creation.
    last_used: now,
    created_by: input.createdBy,
    created_at: now,
    updated_at: now,
  });
  return { key, value };
}

/** Organization, first user (its owner) and a user key: how a new installation or tenant begins. */
export async function bootstrapOrganization(
  ds: DataSource,
  input: { organizationName: string; email: string; keyName: string },
) {
  return ds.transaction(async (em) => {
    const user = await upsertUserByEmail(em, input.email);
    const organization = await createOrganization(em, { name: input.organizationName, createdBy: user.user_id });
    await addMember(em, organization.organization_id, user.user_id, 'owner');
    const { key, value } = await createApiKey(em, {
      organizationId: organization.organization_id,
      userId: user.user_id,
      name: input.keyName,
      createdBy: user.user_id,
    });
    return { organization, user, key, value };
  });
}

/** Organization ids the user belongs to, keyed by user id. */
export async function organizationsOfUsers(ds: DataSource, userIds: string[]): Promise<Map<string, string[]>> {
  const map = new Map<string, string[]>(userIds.map((id) => [id, []]));
  if (!userIds.length) return map;
  const rows = await ds
    .getRepository(Membership)
    .find({ where: userIds.map((user_id) => ({ user_id })), order: { created_at: 'ASC' } });
  for (const r of rows) map.get(r.user_id)?.push(r.organization_id);
  return map;
}
