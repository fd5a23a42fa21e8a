// Users: the caller's organization's (GET /api/users) and an organization's members.
import { api, data } from './client';

export const listUsers = () => data(api.GET('/api/users'));

export const listMembers = (organizationId: string) =>
  data(
    api.GET('/api/organizations/{organization_id}/users', {
      params: { path: { organization_id: organizationId }, query: { page_size: 100 } },
    }),
  );
