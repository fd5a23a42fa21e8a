// Data connectors and their data jobs: the list, one connector, its jobs, a new job, the cancel of an open one.
import { api, data } from './client';

const ofConnector = (id: string) => ({ path: { data_connector_id: id } });

export const listDataConnectors = (page: number) =>
  data(api.GET('/api/data-connectors', { params: { query: { page, page_size: 25 } } }));

export const getDataConnector = (id: string) =>
  data(api.GET('/api/data-connectors/{data_connector_id}', { params: ofConnector(id) }));

export const listDataJobs = (id: string) =>
  data(
    api.GET('/api/data-connectors/{data_connector_id}/data-jobs', {
      params: { ...ofConnector(id), query: { page_size: 20 } },
    }),
  );

export const startDataJob = (id: string) =>
  data(api.POST('/api/data-connectors/{data_connector_id}/data-jobs', { params: ofConnector(id) }));

export const cancelDataJob = (jobId: string) =>
  data(api.POST('/api/data-jobs/{data_job_id}/cancel', { params: { path: { data_job_id: jobId } } }));
