// Members of an organization with their roles (docs/people.md#roles): listed by anyone in it, their roles
// changed by admins and owners. Members join by invite (CreateInvite names the role) and leave through
// DeleteOrganizationUser (src/api/routes/accounts.ts).
import { In } from 'typeorm';
import { Membership, User } from '../../persistence/entities';
import { iso } from '../../persistence/scoped';
import { paginate, skipTake } from '../../persistence/pagination';
import { changeMemberRole } from '../../services/accounts/members';
import { ownOrganization } from './accounts';
import { route } from '../http/route';
import { defineSchema, pageOf, roleSchema, timestamp, uuid } from '../schemas/registry';

const TAG = 'Organizations';

const MemberSchema = defineSchema('Member', {
  type: 'object',
  required: ['user_id', 'email', 'role', 'joined_at'],
  properties: {
    user_id: uuid,
    email: { type: 'string' },
    name: { type: 'string' },
    role: roleSchema,
    joined_at: timestamp,
  },
});

const present = (m: Membership, u: User) => ({
  user_id: m.user_id,
  email: u.email,
  ...(u.name ? { name: u.name } : {}),
  role: m.role,
  joined_at: iso(m.created_at),
});

route({
  operationId: 'ListOrganizationMembers',
  method: 'get',
  path: '/organizations/{organization_id}/members',
  tag: TAG,
  paged: true,
  summary: "The organization's members and their roles, oldest first.",
  params: { organization_id: uuid },
  responses: { 200: { description: 'Members', schema: pageOf('MemberList', 'members', MemberSchema) } },
  handler: async ({ deps, caller, params, page }) => {
    ownOrganization(caller, params.organization_id);
    const [members, total] = await deps.ds.getRepository(Membership).findAndCount({
      where: { organization_id: caller.organizationId },
      order: { created_at: 'ASC', user_id: 'ASC' },
      ...skipTake(page),
    });
    const users = await deps.ds.getRepository(User).findBy({ user_id: In(members.map((m) => m.user_id)) });
    const byId = new Map(users.map((u) => [u.user_id, u]));
    return {
      status: 200,
      body: { members: members.map((m) => present(m, byId.get(m.user_id)!)), pagination: paginate(page, total) },
    };
  },
});

route({
  operationId: 'UpdateOrganizationMember',
  method: 'patch',
  path: '/organizations/{organization_id}/members/{user_id}',
  tag: TAG,
  audit: (b) => ({ role: b.role }),
  summary:
    "Changes a member's role. No one acts on a member above their own role or gives a role above it (403); the " +
    'last owner keeps the role (409). Their sessions and keys act with the new role from the next request.',
  params: { organization_id: uuid, user_id: uuid },
  body: defineSchema('UpdateMemberRequest', {
    type: 'object',
    required: ['role'],
    properties: { role: roleSchema },
  }),
  bodyRequired: true,
  responses: { 200: { description: 'Member', schema: MemberSchema } },
  handler: async ({ deps, caller, params, body }) => {
    ownOrganization(caller, params.organization_id);
    const { membership, keyHashes } = await changeMemberRole(deps.ds, caller, params.user_id, body.role);
    for (const hash of keyHashes) deps.keyCache?.changed(hash);
    const user = await deps.ds.getRepository(User).findOneByOrFail({ user_id: params.user_id });
    return { status: 200, body: present(membership, user) };
  },
});
