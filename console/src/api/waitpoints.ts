// Waitpoints (docs/waitpoints.md): what runs wait for (a person's approval of a tool call), and completing one.
import { api, data, type Schemas } from './client';

export type Waitpoint = Schemas['Waitpoint'];

export const listWaiting = () =>
  data(api.GET('/api/waitpoints', { params: { query: { status: ['WAITING'], page_size: 100 } } }));

export const completeWaitpoint = (
  id: string,
  body: { approved: boolean; arguments?: Record<string, unknown>; reason?: string },
) => data(api.POST('/api/waitpoints/{waitpoint_id}/complete', { params: { path: { waitpoint_id: id } }, body }));
