// Events of structure runs: USER events posted by the run's code (or anyone of its organization), the
// SYSTEM events of its lifecycle, read as offset lists, singly, or live (SSE, src/api/sse).
import type { DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import { conflict, notFound } from '../../../errors';
import { RunEvent } from '../../../persistence/entities';
import { RunStatus } from '../../../persistence/entities/run';
import { isTerminal } from './lifecycle';
import { appendEvents } from './state';
import { assertRunAccess } from './code-runs';
import { claimAddition, type IdempotencyClaim } from '../../../jobs/idempotency';

export const MAX_EVENTS_PER_REQUEST = 1000;
/** The event whose payload carries the run's output (`payload.output_task_output`). */
export const FINISH_EVENT_TYPE = 'FinishStructureRunEvent';

export interface EventInput {
  type: string;
  payload?: unknown;
  timestamp: number;
}

/** Any of the three accepted bodies → the list of events, in order. */
export function eventsOfBody(body: EventInput | EventInput[] | { events: EventInput[] }): EventInput[] {
  if (Array.isArray(body)) return body;
  if ('events' in body && Array.isArray(body.events)) return body.events;
  return [body as EventInput];
}

/**
 * Stores the events (origin USER) after the run's existing ones. The run must not have ended: its events
 * are final then (and its stream has closed). The last FinishStructureRunEvent sets the run's output.
 * With a `claim`, a repeat of its key stores nothing and answers `stored: false`: a client may retry a post
 * whose answer it never got.
 */
export async function createUserEvents(
  ds: DataSource,
  caller: Caller,
  runId: string,
  events: EventInput[],
  /** The request's Idempotency-Key: a repeat of it stores nothing (claimAddition). */
  claim?: IdempotencyClaim,
): Promise<{ stored: boolean }> {
  assertRunAccess(caller, runId);
  return ds.transaction(async (em) => {
    // The row lock also orders this against the workflow's terminal write.
    const rows: Array<{ status: RunStatus }> = await em.query(
      `SELECT status FROM runs WHERE run_id = $1 AND organization_id = $2 AND kind = 'structure' FOR UPDATE`,
      [runId, caller.organizationId],
    );
    if (!rows.length) throw notFound('Structure run');
    if (isTerminal(rows[0].status))
      throw conflict(`This run already ended (${rows[0].status}); its events can no longer change`);
    if (claim && !(await claimAddition(em, claim, { kind: 'structure-run', id: runId }))) return { stored: false };
    const now = Date.now() / 1000;
    await appendEvents(
      em,
      runId,
      events.map((e) => ({
        type: e.type,
        origin: 'USER',
        payload: e.payload ?? null,
        timestamp: e.timestamp ?? now,
      })),
    );
    const finish = [...events].reverse().find((e) => e.type === FINISH_EVENT_TYPE);
    if (finish) {
      const payload = finish.payload as { output_task_output?: unknown } | null | undefined;
      const output = payload && typeof payload === 'object' ? (payload.output_task_output ?? null) : null;
      // Not a status change: the output is data the run reports about itself.
      await em.query(`UPDATE runs SET output = $2, output_timestamp = $3, updated_at = now() WHERE run_id = $1`, [
        runId,
        output === null ? null : JSON.stringify(output),
        finish.timestamp ?? now,
      ]);
    }
    return { stored: true };
  });
}

export interface EventPage {
  events: RunEvent[];
  total: number;
}

export async function listRunEvents(ds: DataSource, runId: string, limit: number, offset: number): Promise<EventPage> {
  const [events, total] = await ds.getRepository(RunEvent).findAndCount({
    where: { run_id: runId },
    order: { seq: 'ASC' },
    skip: offset,
    take: limit,
  });
  return { events, total };
}

/** Events with a sequence number above `afterSeq`, oldest first (SSE catch-up). */
export function eventsAfter(ds: DataSource, runId: string, afterSeq: number, limit: number): Promise<RunEvent[]> {
  return ds
    .getRepository(RunEvent)
    .createQueryBuilder('e')
    .where('e.run_id = :runId AND e.seq > :afterSeq', { runId, afterSeq })
    .orderBy('e.seq', 'ASC')
    .limit(limit)
    .getMany();
}

/** One event of a structure run of the caller's organization (a run's credential: of that run only). */
export async function findStructureRunEvent(ds: DataSource, caller: Caller, eventId: string): Promise<RunEvent> {
  const event = await ds
    .getRepository(RunEvent)
    .createQueryBuilder('e')
    .innerJoin('runs', 'r', `r.run_id = e.run_id AND r.kind = 'structure'`)
    .where('e.event_id = :eventId AND e.organization_id = :org', { eventId, org: caller.organizationId })
    .getOne();
  if (!event) throw notFound('Event');
  assertRunAccess(caller, event.run_id);
  return event;
}

export const presentEvent = (e: RunEvent) => ({
  event_id: e.event_id,
  structure_run_id: e.run_id,
  type: e.type,
  origin: e.origin,
  payload: e.payload,
  timestamp: e.timestamp,
  created_at: e.created_at.toISOString(),
});
