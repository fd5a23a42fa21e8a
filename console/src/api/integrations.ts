// Integrations: the list, one integration, and its deliveries (newest first, paged by the server).
import { api, data, type Schemas } from './client';

export type IntegrationDelivery = Schemas['IntegrationDelivery'];

export const listIntegrations = (page: number) =>
  data(api.GET('/api/integrations', { params: { query: { page, page_size: 25 } } }));

export const getIntegration = (id: string) =>
  data(api.GET('/api/integrations/{integration_id}', { params: { path: { integration_id: id } } }));

export const listDeliveries = (id: string, page: number) =>
  data(
    api.GET('/api/integrations/{integration_id}/deliveries', {
      params: { path: { integration_id: id }, query: { page, page_size: 25 } },
    }),
  );
