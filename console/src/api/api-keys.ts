// API keys: an organization's (an admin's view: every key, a new organization key with its role), a person's
// own (anyone may make keys for themselves: they act with their role), the revocation of one (an admin's).
import { api, data } from './client';
import type { Role } from '../role';

const ofOrganization = (id: string) => ({ path: { organization_id: id } });
const ofUser = (id: string) => ({ path: { user_id: id } });

export const listApiKeys = (organizationId: string) =>
  data(api.GET('/api/organizations/{organization_id}/api-keys', { params: ofOrganization(organizationId) }));

export const createApiKey = (organizationId: string, name: string, role: Role) =>
  data(
    api.POST('/api/organizations/{organization_id}/api-keys', {
      params: ofOrganization(organizationId),
      body: { name, role },
    }),
  );

export const listOwnApiKeys = (userId: string) =>
  data(api.GET('/api/users/{user_id}/api-keys', { params: ofUser(userId) }));

export const createOwnApiKey = (userId: string, name: string) =>
  data(api.POST('/api/users/{user_id}/api-keys', { params: ofUser(userId), body: { name } }));

export const revokeApiKey = (apiKeyId: string) =>
  data(api.DELETE('/api/api-keys/{api_key_id}', { params: { path: { api_key_id: apiKeyId } } }));
