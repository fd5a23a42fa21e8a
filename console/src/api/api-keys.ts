// An organization's API keys: the list, a new one (its value is answered once), the revocation of one.
import { api, data } from './client';

const ofOrganization = (id: string) => ({ path: { organization_id: id } });

export const listApiKeys = (organizationId: string) =>
  data(api.GET('/api/organizations/{organization_id}/api-keys', { params: ofOrganization(organizationId) }));

export const createApiKey = (organizationId: string, name: string) =>
  data(
    api.POST('/api/organizations/{organization_id}/api-keys', {
      params: ofOrganization(organizationId),
      body: { name },
    }),
  );

export const revokeApiKey = (apiKeyId: string) =>
  data(api.DELETE('/api/api-keys/{api_key_id}', { params: { path: { api_key_id: apiKeyId } } }));
