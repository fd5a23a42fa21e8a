// Users: the caller's organization's (GET /api/users, also the check of a key before signing in with it) and
// an organization's members.
import { api, data, errorText } from './client';

export const listUsers = () => data(api.GET('/api/users'));

export const listMembers = (organizationId: string) =>
  data(
    api.GET('/api/organizations/{organization_id}/users', {
      params: { path: { organization_id: organizationId }, query: { page_size: 100 } },
    }),
  );

/** Why `key` cannot sign in (GET /api/users with it answers no 2xx), or undefined when it can. */
export async function keyRefusal(key: string): Promise<string | undefined> {
  const { error, response } = await api.GET('/api/users', { headers: { Authorization: `Bearer ${key}` } });
  if (response.ok) return undefined;
  return response.status === 401 ? 'This API key is unknown, inactive or deleted.' : errorText(error);
}
