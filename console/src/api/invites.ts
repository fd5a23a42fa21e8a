// An organization's invites: the list, a new one by email with the role it gives (it expires on its own), the
// withdrawal of one.
import { api, data } from './client';
import type { Role } from '../role';

const ofOrganization = (id: string) => ({ path: { organization_id: id } });

export const listInvites = (organizationId: string) =>
  data(
    api.GET('/api/organizations/{organization_id}/invites', {
      params: { ...ofOrganization(organizationId), query: { page_size: 100 } },
    }),
  );

export const createInvite = (organizationId: string, email: string, role: Role) =>
  data(
    api.POST('/api/organizations/{organization_id}/invites', {
      params: ofOrganization(organizationId),
      body: { email, role },
    }),
  );

export const withdrawInvite = (inviteId: string) =>
  data(api.DELETE('/api/invites/{invite_id}', { params: { path: { invite_id: inviteId } } }));
