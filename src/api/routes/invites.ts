// Invites: each one is a workflow (PENDING until answered or until it expires).
import { DataSource, In } from 'typeorm';
import { Invite, Organization } from '../../persistence/entities';
import { INVITE_STATUSES } from '../../persistence/entities/invite';
import { iso, pageInOrg } from '../../persistence/scoped';
import {
  callerEmail,
  createInvite,
  deleteInvite,
  findVisibleInvite,
  respondToInvite,
} from '../../services/accounts/invites';
import { notFound } from '../../errors';
import { paginate, skipTake } from '../../persistence/pagination';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Invites';

const InviteSchema = defineSchema('Invite', {
  type: 'object',
  required: [
    'invite_id',
    'created_at',
    'created_by',
    'email',
    'expires_at',
    'organization_id',
    'organization_name',
    'status',
  ],
  properties: {
    invite_id: uuid,
    organization_id: uuid,
    organization_name: {
      type: 'string',
      description: 'What the invitee is invited to (the generated client requires it).',
    },
    email: { type: 'string' },
    status: { type: 'string', enum: [...INVITE_STATUSES] },
    expires_at: timestamp,
    responded_at: timestamp,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});
const InviteList = pageOf('InviteList', 'invites', InviteSchema);

const present = (i: Invite, organizationName: string) => ({
  invite_id: i.invite_id,
  organization_id: i.organization_id,
  organization_name: organizationName,
  email: i.email,
  status: i.status,
  expires_at: iso(i.expires_at),
  ...(i.responded_at ? { responded_at: iso(i.responded_at) } : {}),
  created_by: i.created_by,
  created_at: iso(i.created_at),
  updated_at: iso(i.updated_at),
});

/** Invites as answered, with the names of their organizations. */
async function presentAll(ds: DataSource, invites: Invite[]) {
  const ids = [...new Set(invites.map((i) => i.organization_id))];
  const organizations = ids.length ? await ds.getRepository(Organization).findBy({ organization_id: In(ids) }) : [];
  const names = new Map(organizations.map((o) => [o.organization_id, o.name]));
  return invites.map((i) => present(i, names.get(i.organization_id) ?? ''));
}

route({
  operationId: 'CreateInvite',
  method: 'post',
  path: '/organizations/{organization_id}/invites',
  tag: TAG,
  summary:
    'Invites an email address to the organization. The invite expires after INVITE_TTL_SECONDS (7 days by default).',
  params: { organization_id: uuid },
  body: defineSchema('CreateInviteRequest', {
    type: 'object',
    required: ['email'],
    properties: { email: { ...str(1, 254), format: 'email' } },
  }),
  bodyRequired: true,
  responses: { 201: { description: 'Invite', schema: InviteSchema } },
  handler: async ({ deps, caller, params, body }) => {
    if (params.organization_id !== caller.organizationId) throw notFound('Organization');
    const invite = await createInvite(
      {
        ds: deps.ds,
        temporal: deps.temporal,
        taskQueue: deps.config.temporal.taskQueue,
        ttlSeconds: deps.config.inviteTtlSeconds,
      },
      caller,
      body.email,
    );
    return { status: 201, body: (await presentAll(deps.ds, [invite]))[0] };
  },
});

route({
  operationId: 'ListInvites',
  method: 'get',
  path: '/organizations/{organization_id}/invites',
  tag: TAG,
  paged: true,
  summary: "The organization's invites.",
  params: { organization_id: uuid },
  responses: { 200: { description: 'Invites', schema: InviteList } },
  handler: async ({ deps, caller, params, page }) => {
    if (params.organization_id !== caller.organizationId) throw notFound('Organization');
    const { items, pagination } = await pageInOrg(deps.ds, Invite, caller.organizationId, page);
    return { status: 200, body: { invites: await presentAll(deps.ds, items), pagination } };
  },
});

route({
  operationId: 'ListUserInvites',
  method: 'get',
  path: '/invites',
  tag: TAG,
  paged: true,
  summary: "Invites addressed to the calling user's email, from any organization (empty for organization keys).",
  responses: { 200: { description: 'Invites', schema: InviteList } },
  handler: async ({ deps, caller, page }) => {
    const email = await callerEmail(deps.ds, caller);
    const [items, total] = email
      ? await deps.ds
          .getRepository(Invite)
          .findAndCount({ where: { email }, order: { created_at: 'DESC' }, ...skipTake(page) })
      : [[], 0];
    return { status: 200, body: { invites: await presentAll(deps.ds, items), pagination: paginate(page, total) } };
  },
});

route({
  operationId: 'GetInvite',
  method: 'get',
  path: '/invites/{invite_id}',
  tag: TAG,
  summary: 'An invite, visible to its organization and to the invited user.',
  params: { invite_id: uuid },
  responses: { 200: { description: 'Invite', schema: InviteSchema } },
  handler: async ({ deps, caller, params }) => {
    const { invite } = await findVisibleInvite(deps.ds, caller, params.invite_id);
    return { status: 200, body: (await presentAll(deps.ds, [invite]))[0] };
  },
});

route({
  operationId: 'DeleteInvite',
  method: 'delete',
  path: '/invites/{invite_id}',
  tag: TAG,
  summary: "Withdraws and deletes an invite of the caller's organization.",
  params: { invite_id: uuid },
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteInvite(deps, caller, params.invite_id);
    return { status: 204 };
  },
});

route({
  operationId: 'RespondToInvite',
  method: 'post',
  path: '/invites/{invite_id}/response',
  tag: TAG,
  summary: 'The invited user accepts (joins the organization) or rejects. 409 once the invite expired or was answered.',
  params: { invite_id: uuid },
  body: defineSchema('RespondToInviteRequest', {
    type: 'object',
    required: ['response'],
    properties: { response: { type: 'string', enum: ['ACCEPTED', 'REJECTED'] } },
  }),
  bodyRequired: true,
  responses: { 204: { description: 'Recorded' } },
  handler: async ({ deps, caller, params, body }) => {
    await respondToInvite(deps, caller, params.invite_id, body.response);
    return { status: 204 };
  },
});
