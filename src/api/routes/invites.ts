// Invites: each one is a workflow (PENDING until answered or until it expires).
import { auditSubjectOf } from '../../services/accounts/audit';
import { noteForAudit } from '../http/audit';
import { DataSource, In } from 'typeorm';
import { Invite, Organization } from '../../persistence/entities';
import { INVITE_STATUSES } from '../../persistence/entities/invite';
import { iso, pageInOrg } from '../../persistence/scoped';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../security/passwords';
import {
  acceptInviteByLink,
  callerEmail,
  createInvite,
  deleteInvite,
  findInviteByLink,
  findVisibleInvite,
  inviteLink,
  respondToInvite,
} from '../../services/accounts/invites';
import { notFound } from '../../errors';
import { paginate, skipTake } from '../../persistence/pagination';
import { route } from '../http/route';
import { defineSchema, pageOf, roleSchema, str, timestamp, uuid } from '../schemas/registry';

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
    role: { ...roleSchema, description: 'The role the invitee gets on accepting.' },
    status: { type: 'string', enum: [...INVITE_STATUSES] },
    expires_at: timestamp,
    responded_at: timestamp,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
    accept_url: {
      type: 'string',
      description:
        "Only in CreateInvite's answer, and only when no SMTP server is configured (SMTP_URL): the invite's link " +
        '(its token appears nowhere else). Pass it on to the person invited: following it, they set a password if ' +
        'they have none and accept (docs/people.md#invites). With SMTP, the link is mailed instead.',
    },
    mailed_at: { ...timestamp, description: 'When the mail with its link was sent (with SMTP_URL).' },
    mail_error: { type: 'string', description: 'Why the mail was given up after its retries (with SMTP_URL).' },
  },
});
const InviteList = pageOf('InviteList', 'invites', InviteSchema);

const present = (i: Invite, organizationName: string) => ({
  invite_id: i.invite_id,
  organization_id: i.organization_id,
  organization_name: organizationName,
  email: i.email,
  role: i.role,
  status: i.status,
  expires_at: iso(i.expires_at),
  ...(i.responded_at ? { responded_at: iso(i.responded_at) } : {}),
  ...(i.mailed_at ? { mailed_at: iso(i.mailed_at) } : {}),
  ...(i.mail_error ? { mail_error: i.mail_error } : {}),
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
  audit: (b) => ({ email: b.email, role: b.role ?? 'member' }),
  summary:
    "Invites an email address to the organization, as `role` (member by default; at most the inviter's own). The " +
    'invite expires after INVITE_TTL_SECONDS (7 days by default).',
  params: { organization_id: uuid },
  body: defineSchema('CreateInviteRequest', {
    type: 'object',
    required: ['email'],
    properties: {
      email: { ...str(1, 254), format: 'email' },
      role: { ...roleSchema, description: 'The role the invitee gets on accepting (default member).' },
    },
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
        mail: deps.config.mail !== undefined,
      },
      caller,
      body.email,
      body.role ?? 'member',
    );
    const presented = (await presentAll(deps.ds, [invite.invite]))[0];
    if (!invite.linkToken) return { status: 201, body: presented }; // mailed by its workflow
    return { status: 201, body: { ...presented, accept_url: inviteLink(deps.config.publicBaseUrl, invite.linkToken) } };
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
  audit: (b) => ({ response: b.response }),
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

const linkToken = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: "an invite link's token (43 characters of base64url, after #token= in the link)",
} as const;

route({
  operationId: 'GetInviteLink',
  method: 'get',
  path: '/invite-links/{token}',
  tag: TAG,
  auth: 'none',
  summary:
    "What an invite link invites to, for the person who follows it (no key: the link's token is the credential), " +
    'and whether their email has an account here with a password (`account`). 404 for an unknown link.',
  params: { token: linkToken },
  responses: {
    200: {
      description: 'The invite',
      schema: defineSchema('InviteLink', {
        type: 'object',
        required: ['invite', 'account'],
        properties: {
          invite: InviteSchema,
          account: {
            type: 'string',
            enum: ['NEW', 'NO_PASSWORD', 'HAS_PASSWORD'],
            description: 'NEW and NO_PASSWORD accept with a password to set; HAS_PASSWORD accepts without one.',
          },
        },
      }),
    },
  },
  handler: async ({ ctx, deps, params }) => {
    ctx.set('Cache-Control', 'no-store');
    const { invite, userExists, hasPassword } = await findInviteByLink(deps.ds, params.token);
    const account = hasPassword ? 'HAS_PASSWORD' : userExists ? 'NO_PASSWORD' : 'NEW';
    return { status: 200, body: { invite: (await presentAll(deps.ds, [invite]))[0], account } };
  },
});

route({
  operationId: 'AcceptInviteLink',
  method: 'post',
  path: '/invite-links/{token}/acceptance',
  tag: TAG,
  audit: true,
  auth: 'none',
  summary:
    'Accepts the invite of a link: the person joins the organization (their user is made if new) and ' +
    '`RespondToInvite` is recorded. Without a password yet, `password` is required and set once the invite is ' +
    'ACCEPTED; with one, it must be absent (409: sign in instead). 409 once the invite expired or was answered; ' +
    '404 for an unknown link. Then sign in (POST /api/sessions).',
  params: { token: linkToken },
  body: defineSchema('AcceptInviteLinkRequest', {
    type: 'object',
    additionalProperties: false,
    properties: {
      password: {
        ...str(PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH),
        description: `The password to set: ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`,
      },
    },
  }),
  responses: { 200: { description: 'Accepted', schema: InviteSchema } },
  handler: async ({ ctx, deps, params, body }) => {
    ctx.set('Cache-Control', 'no-store');
    // Audited under the invite's organization, refused or not.
    const named = (await findInviteByLink(deps.ds, params.token)).invite;
    noteForAudit(ctx, { organizationId: named.organization_id, detail: { email: named.email } });
    const invite = await acceptInviteByLink(deps, params.token, body.password);
    noteForAudit(ctx, { userId: (await auditSubjectOf(deps.ds, { email: invite.email })).userId });
    return { status: 200, body: (await presentAll(deps.ds, [invite]))[0] };
  },
});
