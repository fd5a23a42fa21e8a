// Users: the caller's organization's (GET /api/users), an organization's members with their roles, a role
// changed, a member removed.
import { api, data } from './client';
import type { Role } from '../role';

export const listUsers = () => data(api.GET('/api/users'));

export const listMembers = (organizationId: string) =>
  data(
    api.GET('/api/organizations/{organization_id}/members', {
      params: { path: { organization_id: organizationId }, query: { page_size: 100 } },
    }),
  );

export const changeMemberRole = (organizationId: string, userId: string, role: Role) =>
  data(
    api.PATCH('/api/organizations/{organization_id}/members/{user_id}', {
      params: { path: { organization_id: organizationId, user_id: userId } },
      body: { role },
    }),
  );

export const removeMember = (organizationId: string, userId: string) =>
  data(
    api.DELETE('/api/organizations/{organization_id}/users/{user_id}', {
      params: { path: { organization_id: organizationId, user_id: userId } },
    }),
  );
