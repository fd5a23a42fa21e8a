// Runs: the lists of every kind (GET /api/runs) and the organization's stream of their changes; and a run of any
// kind through its kind's own routes: the record, its log lines, its event stream, its cancel, its replay.
import { api, data, type Schemas } from './client';

export type RunKind = Schemas['RunSummary']['kind'];
export type RunStatus = Schemas['RunSummary']['status'];
export const RUN_KINDS: RunKind[] = ['structure', 'function', 'tool', 'assistant', 'chat'];
export const RUN_STATUSES: RunStatus[] = ['QUEUED', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];
export const isTerminal = (s: string) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(s);

/** The filters and page of the Runs page (its URL's search). */
export interface RunsSearch {
  page?: number;
  kind?: RunKind;
  status?: RunStatus;
  resource_id?: string;
  created_by?: string;
  created_after?: string;
  created_before?: string;
}

export const listRuns = (search: RunsSearch, pageSize: number) =>
  data(
    api.GET('/api/runs', {
      params: {
        query: {
          page: search.page ?? 1,
          page_size: pageSize,
          kind: search.kind ? [search.kind] : undefined,
          status: search.status ? [search.status] : undefined,
          resource_id: search.resource_id,
          created_by: search.created_by,
          created_after: search.created_after,
          created_before: search.created_before,
        },
      },
    }),
  );

/** The latest runs of one resource. */
export const listRecentRuns = (kind: RunKind, resourceId: string) =>
  data(api.GET('/api/runs', { params: { query: { kind: [kind], resource_id: resourceId, page_size: 10 } } }));

/** One response of the organization's run changes (GET /api/runs/stream), from after `lastEventId`. */
export async function openRunChanges(
  lastEventId: string | undefined,
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const answer = await api.GET('/api/runs/stream', {
    headers: lastEventId ? { 'Last-Event-ID': lastEventId } : undefined,
    signal,
    parseAs: 'stream',
  });
  if (!answer.response.ok || !answer.data) throw new Error(`run changes: HTTP ${answer.response.status}`);
  return answer.data as ReadableStream<Uint8Array>;
}

/** What the detail page shows of any run. */
export interface RunRecord {
  status: RunStatus;
  status_detail?: unknown;
  args?: string[];
  input?: unknown;
  output?: unknown;
  owner?: string;
  deployment_id?: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  created_by: string;
  replayed_from_run_id?: string;
  /** Run control (docs/run-control.md): the attempt running or last run, and each attempt's ending. */
  attempt?: number;
  attempts?: Schemas['RunAttempt'][];
  idempotency_key?: string;
  concurrency_key?: string;
}

export async function fetchRun(kind: RunKind, id: string): Promise<RunRecord | undefined> {
  switch (kind) {
    case 'structure': {
      const r = await data(
        api.GET('/api/structure-runs/{structure_run_id}', { params: { path: { structure_run_id: id } } }),
      );
      return { ...r, owner: r.structure_id };
    }
    case 'function': {
      const r = await data(
        api.GET('/api/function-runs/{function_run_id}', { params: { path: { function_run_id: id } } }),
      );
      return { ...r, owner: r.function_id };
    }
    case 'tool': {
      const r = await data(api.GET('/api/tool-runs/{tool_run_id}', { params: { path: { tool_run_id: id } } }));
      return { ...r, owner: r.tool_id };
    }
    case 'assistant': {
      const r = await data(
        api.GET('/api/assistant-runs/{assistant_run_id}', { params: { path: { assistant_run_id: id } } }),
      );
      return { ...r, owner: r.assistant_id, started_at: r.started_at ?? null, completed_at: r.completed_at ?? null };
    }
    default:
      return undefined; // chat exchanges are read through their thread
  }
}

export async function fetchLogs(kind: RunKind, id: string): Promise<string[] | undefined> {
  switch (kind) {
    case 'structure':
      return (
        await data(
          api.GET('/api/structure-runs/{structure_run_id}/logs', { params: { path: { structure_run_id: id } } }),
        )
      ).logs;
    case 'function':
      return (
        await data(api.GET('/api/function-runs/{function_run_id}/logs', { params: { path: { function_run_id: id } } }))
      ).logs;
    case 'tool':
      return (await data(api.GET('/api/tool-runs/{tool_run_id}/logs', { params: { path: { tool_run_id: id } } }))).logs;
    default:
      return undefined;
  }
}

export const canCancel = (kind: RunKind) => kind === 'structure' || kind === 'assistant';

export async function cancelRun(kind: RunKind, id: string): Promise<void> {
  if (kind === 'structure')
    await data(
      api.POST('/api/structure-runs/{structure_run_id}/cancel', { params: { path: { structure_run_id: id } } }),
    );
  else if (kind === 'assistant')
    await data(
      api.POST('/api/assistant-runs/{assistant_run_id}/cancel', { params: { path: { assistant_run_id: id } } }),
    );
}

export const hasEventStream = (kind: RunKind) => kind === 'structure' || kind === 'assistant';

/**
 * One response of the run's SSE stream, from after `lastEventId` (the `Last-Event-ID` header), with the end frame
 * (`?end_event=true`): `event: end` with the final status tells an ended stream from a dropped one.
 */
export async function openEventStream(
  kind: RunKind,
  id: string,
  lastEventId: string | undefined,
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const headers = lastEventId ? { 'Last-Event-ID': lastEventId } : undefined;
  const answer =
    kind === 'assistant'
      ? await api.GET('/api/assistant-runs/{assistant_run_id}/events/stream', {
          params: { path: { assistant_run_id: id }, query: { end_event: true } },
          headers,
          signal,
          parseAs: 'stream',
        })
      : await api.GET('/api/structure-runs/{structure_run_id}/events/stream', {
          params: { path: { structure_run_id: id }, query: { end_event: true } },
          headers,
          signal,
          parseAs: 'stream',
        });
  if (!answer.response.ok || !answer.data) throw new Error(`event stream: HTTP ${answer.response.status}`);
  return answer.data as ReadableStream<Uint8Array>;
}

/** Events after `offset` by the list route: the fallback when the stream keeps failing. */
export async function listEvents(kind: RunKind, id: string, offset: number) {
  const page =
    kind === 'assistant'
      ? await data(
          api.GET('/api/assistant-runs/{assistant_run_id}/events', {
            params: { path: { assistant_run_id: id }, query: { offset } },
          }),
        )
      : await data(
          api.GET('/api/structure-runs/{structure_run_id}/events', {
            params: { path: { structure_run_id: id }, query: { offset } },
          }),
        );
  return page.events as RunEvent[];
}

export interface RunEvent {
  event_id: string;
  type: string;
  origin: string;
  payload: unknown;
  timestamp: number;
  created_at: string;
}

export const canReplay = (kind: RunKind) => kind !== 'chat';

/** A new run of a finished one (docs/run-control.md): same args or input, latest deployment. Answers its id. */
export async function replayRun(kind: RunKind, id: string): Promise<string> {
  switch (kind) {
    case 'structure':
      return (
        await data(
          api.POST('/api/structure-runs/{structure_run_id}/replay', {
            params: { path: { structure_run_id: id } },
            body: {},
          }),
        )
      ).structure_run_id;
    case 'function':
      return (
        await data(
          api.POST('/api/function-runs/{function_run_id}/replay', {
            params: { path: { function_run_id: id } },
            body: {},
          }),
        )
      ).function_run_id;
    case 'tool':
      return (
        await data(api.POST('/api/tool-runs/{tool_run_id}/replay', { params: { path: { tool_run_id: id } }, body: {} }))
      ).tool_run_id;
    case 'assistant':
      return (
        await data(
          api.POST('/api/assistant-runs/{assistant_run_id}/replay', {
            params: { path: { assistant_run_id: id } },
            body: {},
          }),
        )
      ).assistant_run_id;
    default:
      throw new Error(`a ${kind} run cannot be replayed`);
  }
}

export type RunLimits = Schemas['RunLimits'];

/** The limits a run of any kind executes under (GET /api/runs/{run_id}/limits). */
export const fetchRunLimits = (id: string) =>
  data(api.GET('/api/runs/{run_id}/limits', { params: { path: { run_id: id } } }));

const MiB = 1024 * 1024;
const size = (bytes: number) => (bytes >= MiB ? `${Math.round((bytes / MiB) * 10) / 10} MiB` : `${bytes} bytes`);

/** The limits as short phrases, in the order a reader looks for them; absent ones (not applied) left out. */
export function limitPhrases(l: RunLimits): string[] {
  const phrases = [
    `time ${l.time_limit_seconds} s`,
    l.memory_mb !== undefined && `memory ${l.memory_mb} MiB${l.memory_scope === 'process' ? ' per process' : ''}`,
    l.max_processes !== undefined && `${l.max_processes} processes`,
    l.cpu_seconds !== undefined && `CPU ${l.cpu_seconds} s per process`,
    l.max_open_files !== undefined && `${l.max_open_files} open files per process`,
    l.max_run_open_files !== undefined && `${l.max_run_open_files} open files in all`,
    l.disk_mb !== undefined && `disk ${l.disk_mb} MiB (HOME, /tmp)`,
    l.file_mb !== undefined && `files up to ${l.file_mb} MiB`,
    l.shm_mb !== undefined && `/dev/shm ${l.shm_mb} MiB`,
    l.log_bytes !== undefined && `logs ${size(l.log_bytes)}`,
    l.result_bytes !== undefined && `result ${size(l.result_bytes)}`,
    l.sandbox !== undefined && `sandbox ${l.isolation ?? l.sandbox}`,
    !l.recorded && "today's settings (recorded when the run starts)",
  ];
  return phrases.filter((p): p is string => typeof p === 'string');
}
