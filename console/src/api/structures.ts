// Structures through their own routes: the list, one structure, its deployments, a new deployment, a new run.
import { api, data } from './client';

const ofStructure = (id: string) => ({ path: { structure_id: id } });

export const listStructures = (page: number) =>
  data(api.GET('/api/structures', { params: { query: { page, page_size: 25 } } }));

export const getStructure = (id: string) =>
  data(api.GET('/api/structures/{structure_id}', { params: ofStructure(id) }));

/** A new structure from the example project (`code: {default: {}}`); its first deployment starts at once. */
export const createStructure = (name: string) =>
  data(api.POST('/api/structures', { body: { name, code: { default: {} } } }));

export const listStructureDeployments = (id: string) =>
  data(
    api.GET('/api/structures/{structure_id}/deployments', {
      params: { ...ofStructure(id), query: { page_size: 10 } },
    }),
  );

export const deployStructure = (id: string) =>
  data(api.POST('/api/structures/{structure_id}/deployments', { params: ofStructure(id) }));

export const startStructureRun = (id: string, args: string[]) =>
  data(api.POST('/api/structures/{structure_id}/runs', { params: ofStructure(id), body: { args } }));
