// A resource's schedules and concurrency queue (docs/run-control.md) through the typed client. The routes are
// the same for every kind but the first path segment and its id's name, and answer the same schemas; so each
// call names the structures' route as its type and the kind's route as its path.
import { api, data, type Schemas } from './client';

export type Schedule = Schemas['Schedule'];
export type RunQueue = Schemas['RunQueue'];
export type ScheduleRequest = Schemas['CreateScheduleRequest'];
export type ScheduledKind = 'structure' | 'function' | 'assistant';
export type QueuedKind = 'structure' | 'function' | 'tool';

const ROUTE = { structure: 'structures', function: 'functions', tool: 'tools', assistant: 'assistants' } as const;

/** The kind's path and parameters for one of the structures' routes. */
function route<P extends string>(kind: keyof typeof ROUTE, structuresPath: P, id: string, scheduleId?: string) {
  const path = structuresPath.replace('structures/{structure_id}', `${ROUTE[kind]}/{${kind}_id}`) as P;
  const params = { path: { [`${kind}_id`]: id, structure_id: id, ...(scheduleId ? { schedule_id: scheduleId } : {}) } };
  return { path, params: params as { path: { structure_id: string; schedule_id: string } } };
}

export async function listSchedules(kind: ScheduledKind, id: string): Promise<Schedule[]> {
  const r = route(kind, '/api/structures/{structure_id}/schedules', id);
  return (await data(api.GET(r.path, { params: { ...r.params, query: { page_size: 100 } } }))).schedules;
}

export async function createSchedule(kind: ScheduledKind, id: string, body: ScheduleRequest): Promise<Schedule> {
  const r = route(kind, '/api/structures/{structure_id}/schedules', id);
  return data(api.POST(r.path, { params: r.params, body }));
}

export async function scheduleAction(
  kind: ScheduledKind,
  id: string,
  scheduleId: string,
  action: 'pause' | 'resume' | 'trigger' | 'delete',
): Promise<void> {
  if (action === 'delete') {
    const r = route(kind, '/api/structures/{structure_id}/schedules/{schedule_id}', id, scheduleId);
    await data(api.DELETE(r.path, { params: r.params }));
  } else if (action === 'trigger') {
    const r = route(kind, '/api/structures/{structure_id}/schedules/{schedule_id}/trigger', id, scheduleId);
    await data(api.POST(r.path, { params: r.params }));
  } else {
    const r = route(kind, `/api/structures/{structure_id}/schedules/{schedule_id}/${action}` as const, id, scheduleId);
    await data(api.POST(r.path, { params: r.params }));
  }
}

export async function getQueue(kind: QueuedKind, id: string): Promise<RunQueue> {
  const r = route(kind, '/api/structures/{structure_id}/queue', id);
  return data(api.GET(r.path, { params: r.params }));
}

export async function setQueuePaused(kind: QueuedKind, id: string, paused: boolean): Promise<void> {
  const r = route(kind, `/api/structures/{structure_id}/queue/${paused ? 'pause' : 'resume'}` as const, id);
  await data(api.POST(r.path, { params: r.params }));
}
