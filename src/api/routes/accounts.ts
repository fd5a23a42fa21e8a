// Users, API keys and organizations. A key acts in exactly one organization (its own); a user may
// belong to several and sees all of them in GET /organizations.
import { type DataSource, In, IsNull } from 'typeorm';
import { ApiKey, Membership, Organization, User } from '../../persistence/entities';
import { findInOrg, iso, pageInOrg } from '../../persistence/scoped';
import { createApiKey, isMember, organizationsOfUsers } from '../../services/accounts/accounts';
import { memberRole, removeMember } from '../../services/accounts/members';
import { atLeast, roleRefused } from '../../services/accounts/roles';
import type { Caller } from '../../services/caller';
import { forbidden, notFound } from '../../errors';
import { paginate, skipTake } from '../../persistence/pagination';
import { route } from '../http/route';
import { defineSchema, pageOf, roleSchema, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Users and API keys';

export const UserSchema = defineSchema('User', {
  type: 'object',
  required: ['user_id', 'email', 'organizations', 'created_at', 'updated_at'],
  properties: {
    user_id: uuid,
    email: { type: 'string' },
    name: { type: 'string' },
    organizations: { type: 'array', items: uuid },
    created_at: timestamp,
    updated_at: timestamp,
  },
});
const ApiKeySchema = defineSchema('ApiKey', {
  type: 'object',
  required: ['api_key_id', 'active', 'created_at', 'created_by', 'last_used', 'name', 'organization_id', 'updated_at'],
  properties: {
    api_key_id: uuid,
    active: { type: 'boolean' },
    name: { type: 'string' },
    organization_id: uuid,
    user_id: { type: ['string', 'null'], format: 'uuid' },
    role: {
      ...roleSchema,
      description: "An organization key's role (a user key has none here: it acts with its user's).",
    },
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
    last_used: timestamp,
  },
});
const ApiKeyWithValue = defineSchema('ApiKeyWithValue', {
  allOf: [ApiKeySchema, { type: 'object', required: ['value'], properties: { value: { type: 'string' } } }],
});
const OrganizationSchema = defineSchema('Organization', {
  type: 'object',
  required: [
    'organization_id',
    'name',
    'description',
    'entitlement',
    'default_bucket_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    organization_id: uuid,
    name: { type: 'string' },
    description: {
      type: 'string',
      description: 'Always "" for now (organizations are named by operators; the client requires the member).',
    },
    entitlement: { type: 'string', enum: ['FREE', 'PAID', 'UNPAID', 'EXPIRED'] },
    default_bucket_id: {
      ...uuid,
      description:
        'Created with the organization; used where a bucket is needed and none is named (GT_CLOUD_BUCKET_ID of runs).',
    },
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});
const CreateApiKeyBody = defineSchema('CreateApiKeyRequest', {
  type: 'object',
  required: ['name'],
  properties: { name: str(1, 200) },
});
const CreateOrganizationApiKeyBody = defineSchema('CreateOrganizationApiKeyRequest', {
  type: 'object',
  required: ['name'],
  properties: {
    name: str(1, 200),
    role: { ...roleSchema, description: "The key's role (default member; at most the caller's own)." },
  },
});
const UpdateApiKeyBody = defineSchema('UpdateApiKeyRequest', {
  type: 'object',
  properties: {
    name: str(1, 200),
    active: { type: 'boolean', description: 'Deactivate (false) or reactivate a key.' },
  },
});
const ApiKeyList = pageOf('ApiKeyList', 'api_keys', ApiKeySchema);
const UserList = defineSchema('UserList', {
  type: 'object',
  required: ['users'],
  properties: { users: { type: 'array', items: UserSchema } },
});
const OrganizationList = pageOf('OrganizationList', 'organizations', OrganizationSchema);

// Run-scoped credentials (run_id set) are the platform's, minted for one run and deleted when it ends:
// they are never listed, read, changed or deleted through these routes.
export const presentApiKey = (k: ApiKey) => ({
  api_key_id: k.api_key_id,
  active: k.active,
  name: k.name,
  organization_id: k.organization_id,
  user_id: k.user_id,
  ...(k.role ? { role: k.role } : {}),
  created_by: k.created_by,
  created_at: iso(k.created_at),
  updated_at: iso(k.updated_at),
  last_used: iso(k.last_used),
});
export const presentUser = (u: User, organizations: string[]) => ({
  user_id: u.user_id,
  email: u.email,
  ...(u.name ? { name: u.name } : {}),
  organizations,
  created_at: iso(u.created_at),
  updated_at: iso(u.updated_at),
});
export const presentOrganization = (o: Organization) => ({
  organization_id: o.organization_id,
  name: o.name,
  description: '',
  entitlement: o.entitlement,
  default_bucket_id: o.default_bucket_id,
  created_by: o.created_by,
  created_at: iso(o.created_at),
  updated_at: iso(o.updated_at),
});

/** The path's organization must be the one the key acts in. */
export function ownOrganization(caller: Caller, organizationId: string) {
  if (organizationId !== caller.organizationId) throw notFound('Organization');
}

route({
  operationId: 'ListUsers',
  method: 'get',
  path: '/users',
  tag: TAG,
  summary: "Users of the caller's organization (all of them; no pagination, as in the interface).",
  responses: { 200: { description: 'Users', schema: UserList } },
  handler: async ({ deps, caller }) => {
    const members = await deps.ds.getRepository(Membership).findBy({ organization_id: caller.organizationId });
    const users = await deps.ds
      .getRepository(User)
      .find({ where: { user_id: In(members.map((m) => m.user_id)) }, order: { created_at: 'ASC' } });
    const orgs = await organizationsOfUsers(
      deps.ds,
      users.map((u) => u.user_id),
    );
    return { status: 200, body: { users: users.map((u) => presentUser(u, orgs.get(u.user_id)!)) } };
  },
});

async function memberOfCallerOrg(
  deps: { ds: import('typeorm').DataSource },
  caller: Caller,
  userId: string,
): Promise<User> {
  if (!(await isMember(deps.ds, caller.organizationId, userId))) throw notFound('User');
  return deps.ds.getRepository(User).findOneByOrFail({ user_id: userId });
}

route({
  operationId: 'GetUser',
  method: 'get',
  path: '/users/{user_id}',
  tag: TAG,
  summary: "A user of the caller's organization.",
  params: { user_id: uuid },
  responses: { 200: { description: 'User', schema: UserSchema } },
  handler: async ({ deps, caller, params }) => {
    const user = await memberOfCallerOrg(deps, caller, params.user_id);
    const orgs = await organizationsOfUsers(deps.ds, [user.user_id]);
    return { status: 200, body: presentUser(user, orgs.get(user.user_id)!) };
  },
});

route({
  operationId: 'ListApiKeys',
  method: 'get',
  path: '/users/{user_id}/api-keys',
  tag: TAG,
  paged: true,
  summary: "A user's API keys in the caller's organization.",
  params: { user_id: uuid },
  responses: { 200: { description: 'API keys', schema: ApiKeyList } },
  handler: async ({ deps, caller, params, page }) => {
    await memberOfCallerOrg(deps, caller, params.user_id);
    const { items, pagination } = await pageInOrg(deps.ds, ApiKey, caller.organizationId, page, {
      user_id: params.user_id,
      run_id: IsNull(),
    });
    return { status: 200, body: { api_keys: items.map(presentApiKey), pagination } };
  },
});

route({
  operationId: 'CreateApiKey',
  method: 'post',
  path: '/users/{user_id}/api-keys',
  tag: TAG,
  audit: (b) => ({ name: b.name }),
  summary:
    "Creates a key that acts as this user, with their role, in the caller's organization. A person may create keys only for themselves; an admin's organization key for any member of a role up to its own. The `value` is returned only here.",
  params: { user_id: uuid },
  body: CreateApiKeyBody,
  bodyRequired: true,
  responses: { 201: { description: 'The new key, with its value', schema: ApiKeyWithValue } },
  handler: async ({ deps, caller, params, body }) => {
    await memberOfCallerOrg(deps, caller, params.user_id);
    if (caller.userId !== null && caller.userId !== params.user_id) {
      throw forbidden('A user key can create API keys only for its own user');
    }
    if (caller.userId === null) {
      // An organization key makes a key that acts as someone else: an admin's, for a role up to its own.
      const role = await memberRole(deps.ds, caller, params.user_id);
      const needed = atLeast(role, 'admin') ? role : 'admin';
      if (!atLeast(caller.role, needed)) throw roleRefused(caller.role, needed, `A key for a ${role}`);
    }
    const { key, value } = await createApiKey(deps.ds, {
      organizationId: caller.organizationId,
      userId: params.user_id,
      name: body.name,
      createdBy: caller.actor,
    });
    return { status: 201, body: { ...presentApiKey(key), value } };
  },
});

route({
  operationId: 'ListOrganizationApiKeys',
  method: 'get',
  path: '/organizations/{organization_id}/api-keys',
  tag: TAG,
  paged: true,
  summary: 'Every API key of the organization (user and organization keys).',
  params: { organization_id: uuid },
  responses: { 200: { description: 'API keys', schema: ApiKeyList } },
  handler: async ({ deps, caller, params, page }) => {
    ownOrganization(caller, params.organization_id);
    const { items, pagination } = await pageInOrg(deps.ds, ApiKey, caller.organizationId, page, { run_id: IsNull() });
    return { status: 200, body: { api_keys: items.map(presentApiKey), pagination } };
  },
});

route({
  operationId: 'CreateOrganizationApiKey',
  method: 'post',
  path: '/organizations/{organization_id}/api-keys',
  tag: TAG,
  audit: (b) => ({ name: b.name, role: b.role ?? 'member' }),
  summary:
    "Creates an organization key (acts as no user) with `role` (default member; at most the caller's own). The `value` is returned only here.",
  params: { organization_id: uuid },
  body: CreateOrganizationApiKeyBody,
  bodyRequired: true,
  responses: { 201: { description: 'The new key, with its value', schema: ApiKeyWithValue } },
  handler: async ({ deps, caller, params, body }) => {
    ownOrganization(caller, params.organization_id);
    const role = body.role ?? 'member';
    if (!atLeast(caller.role, role)) throw roleRefused(caller.role, role, `A key as ${role}`);
    const { key, value } = await createApiKey(deps.ds, {
      organizationId: caller.organizationId,
      userId: null,
      name: body.name,
      createdBy: caller.actor,
      role,
    });
    return { status: 201, body: { ...presentApiKey(key), value } };
  },
});

/** A key of the caller's organization; run credentials are not keys a user manages. */
const findApiKey = (ds: DataSource, caller: Caller, apiKeyId: string) =>
  findInOrg(ds, ApiKey, caller.organizationId, { api_key_id: apiKeyId, run_id: null }, 'API key');

/** A key to change or delete: an admin manages keys of roles up to its own (a user key has its user's). */
async function manageableApiKey(ds: DataSource, caller: Caller, apiKeyId: string): Promise<ApiKey> {
  const key = await findApiKey(ds, caller, apiKeyId);
  const role = key.role ?? (key.user_id ? await memberRole(ds, caller, key.user_id) : 'owner');
  if (!atLeast(caller.role, role)) throw roleRefused(caller.role, role, `Managing a key of a ${role}`);
  return key;
}

route({
  operationId: 'GetApiKey',
  method: 'get',
  path: '/api-keys/{api_key_id}',
  tag: TAG,
  summary: 'An API key (never its value).',
  params: { api_key_id: uuid },
  responses: { 200: { description: 'API key', schema: ApiKeySchema } },
  handler: async ({ deps, caller, params }) => {
    const key = await findApiKey(deps.ds, caller, params.api_key_id);
    return { status: 200, body: presentApiKey(key) };
  },
});

route({
  operationId: 'UpdateApiKey',
  method: 'patch',
  path: '/api-keys/{api_key_id}',
  tag: TAG,
  audit: (b) => ({ name: b.name, active: b.active }),
  summary: 'Renames, deactivates (`active: false`, the key then gets 401) or reactivates a key.',
  params: { api_key_id: uuid },
  body: UpdateApiKeyBody,
  responses: { 200: { description: 'API key', schema: ApiKeySchema } },
  handler: async ({ deps, caller, params, body }) => {
    const key = await manageableApiKey(deps.ds, caller, params.api_key_id);
    if (body.name !== undefined) key.name = body.name;
    if (body.active !== undefined) key.active = body.active;
    key.updated_at = new Date();
    await deps.ds.getRepository(ApiKey).save(key);
    // Other api processes hear of it by NOTIFY; this one forgets the key before it answers.
    deps.keyCache?.changed(key.key_hash.toString('hex'));
    return { status: 200, body: presentApiKey(key) };
  },
});

route({
  operationId: 'DeleteApiKey',
  method: 'delete',
  path: '/api-keys/{api_key_id}',
  tag: TAG,
  summary: 'Deletes a key; it gets 401 from then on.',
  params: { api_key_id: uuid },
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    const key = await manageableApiKey(deps.ds, caller, params.api_key_id);
    await deps.ds.getRepository(ApiKey).delete({ api_key_id: key.api_key_id });
    deps.keyCache?.changed(key.key_hash.toString('hex'));
    return { status: 204 };
  },
});

const ORG_TAG = 'Organizations';

/** Organizations the caller may read: the key's own, plus every one its user belongs to. */
async function visibleOrganizationIds(ds: import('typeorm').DataSource, caller: Caller): Promise<string[]> {
  if (!caller.userId) return [caller.organizationId];
  const orgs = (await organizationsOfUsers(ds, [caller.userId])).get(caller.userId)!;
  return orgs.includes(caller.organizationId) ? orgs : [caller.organizationId, ...orgs];
}

route({
  operationId: 'ListOrganizations',
  method: 'get',
  path: '/organizations',
  tag: ORG_TAG,
  paged: true,
  summary: "The key's organization and every other one its user belongs to.",
  responses: { 200: { description: 'Organizations', schema: OrganizationList } },
  handler: async ({ deps, caller, page }) => {
    const ids = await visibleOrganizationIds(deps.ds, caller);
    const [items, total] = await deps.ds.getRepository(Organization).findAndCount({
      where: { organization_id: In(ids) },
      order: { created_at: 'ASC' },
      ...skipTake(page),
    });
    return { status: 200, body: { organizations: items.map(presentOrganization), pagination: paginate(page, total) } };
  },
});

route({
  operationId: 'GetOrganization',
  method: 'get',
  path: '/organizations/{organization_id}',
  tag: ORG_TAG,
  summary: 'An organization the caller may read.',
  params: { organization_id: uuid },
  responses: { 200: { description: 'Organization', schema: OrganizationSchema } },
  handler: async ({ deps, caller, params }) => {
    const ids = await visibleOrganizationIds(deps.ds, caller);
    if (!ids.includes(params.organization_id)) throw notFound('Organization');
    const org = await deps.ds.getRepository(Organization).findOneBy({ organization_id: params.organization_id });
    if (!org) throw notFound('Organization');
    return { status: 200, body: presentOrganization(org) };
  },
});

route({
  operationId: 'ListOrganizationUsers',
  method: 'get',
  path: '/organizations/{organization_id}/users',
  tag: ORG_TAG,
  paged: true,
  summary: "Members of the key's organization.",
  params: { organization_id: uuid },
  responses: { 200: { description: 'Users', schema: pageOf('OrganizationUserList', 'users', UserSchema) } },
  handler: async ({ deps, caller, params, page }) => {
    ownOrganization(caller, params.organization_id);
    const [members, total] = await deps.ds.getRepository(Membership).findAndCount({
      where: { organization_id: caller.organizationId },
      order: { created_at: 'ASC' },
      ...skipTake(page),
    });
    const users = await deps.ds.getRepository(User).findBy({ user_id: In(members.map((m) => m.user_id)) });
    const byId = new Map(users.map((u) => [u.user_id, u]));
    const orgs = await organizationsOfUsers(
      deps.ds,
      members.map((m) => m.user_id),
    );
    return {
      status: 200,
      body: {
        users: members.map((m) => presentUser(byId.get(m.user_id)!, orgs.get(m.user_id)!)),
        pagination: paginate(page, total),
      },
    };
  },
});

route({
  operationId: 'DeleteOrganizationUser',
  method: 'delete',
  path: '/organizations/{organization_id}/users/{user_id}',
  tag: ORG_TAG,
  summary:
    "Removes a member from the key's organization and deletes the organization's API keys made for them (401 from then on). 404 for a user who is not a member; 403 for a member above the caller's role; 409 for the last owner.",
  params: { organization_id: uuid, user_id: uuid },
  responses: { 204: { description: 'Removed' } },
  handler: async ({ deps, caller, params }) => {
    ownOrganization(caller, params.organization_id);
    for (const hash of await removeMember(deps.ds, caller, params.user_id)) deps.keyCache?.changed(hash);
    return { status: 204 };
  },
});
