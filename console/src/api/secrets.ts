// The organization's secrets, names only: a secret's value never leaves the server.
import { api, data } from './client';

export const listSecrets = () => data(api.GET('/api/secrets', { params: { query: { page_size: 100 } } }));
