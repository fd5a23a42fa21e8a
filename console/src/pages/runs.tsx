// Runs of every kind, newest first, filtered and paged by the server (GET /api/runs). Statuses change in place
// and new runs appear from the organization's stream of run changes (useLiveRuns); while that stream is down
// the page re-reads itself: every 2 s while a listed run is not terminal, else every 5 s.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { queryKeys } from '../api/query-keys';
import {
  isTerminal,
  listRuns,
  RUN_KINDS,
  RUN_STATUSES,
  type RunKind,
  type RunsSearch,
  type RunStatus,
} from '../api/runs';
import { useLiveRuns } from '../live/use-live-runs';
import { ErrorBox, Pager, shortId, StatusBadge, Time } from '../ui';

const PAGE_SIZE = 25;
/** Polling while the stream of changes is down: faster while a listed run is not terminal. */
const LIVE_MS = 2000;
const IDLE_MS = 5000;
const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

export function runsSearch(raw: Record<string, unknown>): RunsSearch {
  return {
    page: Number(raw.page) > 1 ? Number(raw.page) : undefined,
    kind: RUN_KINDS.includes(raw.kind as RunKind) ? (raw.kind as RunKind) : undefined,
    status: RUN_STATUSES.includes(raw.status as RunStatus) ? (raw.status as RunStatus) : undefined,
    resource_id: text(raw.resource_id),
    created_by: text(raw.created_by),
    created_after: text(raw.created_after),
    created_before: text(raw.created_before),
  };
}

/** A datetime-local value (local time) as an ISO timestamp, or undefined. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);
const localOf = (iso: string | undefined) => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export function RunsPage() {
  const search = useSearch({ from: '/runs' });
  const navigate = useNavigate({ from: '/runs' });
  const set = (patch: Partial<RunsSearch>) => navigate({ search: (s) => ({ ...s, page: undefined, ...patch }) });
  const page = search.page ?? 1;
  const { live } = useLiveRuns();

  const runs = useQuery({
    queryKey: queryKeys.runs.list(search),
    placeholderData: keepPreviousData,
    queryFn: () => listRuns(search, PAGE_SIZE),
    refetchInterval: (q) => (live ? false : q.state.data?.runs.some((r) => !isTerminal(r.status)) ? LIVE_MS : IDLE_MS),
  });

  return (
    <>
      <header className="page-header">
        <h1>Runs</h1>
        <span className="muted stream-state" data-testid="runs-live">
          {live ? 'live' : 'refreshing every few seconds'}
        </span>
      </header>
      <form className="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Kind
          <select value={search.kind ?? ''} onChange={(e) => set({ kind: (e.target.value || undefined) as RunKind })}>
            <option value="">All</option>
            {RUN_KINDS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select
            value={search.status ?? ''}
            onChange={(e) => set({ status: (e.target.value || undefined) as RunStatus })}
          >
            <option value="">All</option>
            {RUN_STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Resource id
          <input
            defaultValue={search.resource_id}
            placeholder="structure, function, tool or assistant"
            onBlur={(e) => set({ resource_id: e.target.value.trim() || undefined })}
          />
        </label>
        <label>
          Started by (user or key id)
          <input
            defaultValue={search.created_by}
            onBlur={(e) => set({ created_by: e.target.value.trim() || undefined })}
          />
        </label>
        <label>
          From
          <input
            type="datetime-local"
            defaultValue={localOf(search.created_after)}
            onBlur={(e) => set({ created_after: isoOf(e.target.value) })}
          />
        </label>
        <label>
          Until
          <input
            type="datetime-local"
            defaultValue={localOf(search.created_before)}
            onBlur={(e) => set({ created_before: isoOf(e.target.value) })}
          />
        </label>
      </form>
      <ErrorBox error={runs.error} />
      <table className="list" aria-label="Runs">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Resource</th>
            <th scope="col">Created</th>
            <th scope="col">Completed</th>
          </tr>
        </thead>
        <tbody>
          {runs.data?.runs.map((r) => (
            <tr key={r.run_id} data-run-id={r.run_id}>
              <td>
                <Link to="/runs/$kind/$runId" params={{ kind: r.kind, runId: r.run_id }} className="mono">
                  {shortId(r.run_id)}
                </Link>
              </td>
              <td>{r.kind}</td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td className="mono">{shortId(r.resource_id ?? r.assistant_id)}</td>
              <td>
                <Time at={r.created_at} />
              </td>
              <td>
                <Time at={r.completed_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {runs.data && runs.data.runs.length === 0 && <p className="muted">No run matches.</p>}
      {runs.data && (
        <Pager
          page={page}
          totalPages={runs.data.pagination.total_pages}
          onPage={(p) => navigate({ search: (s) => ({ ...s, page: p > 1 ? p : undefined }) })}
        />
      )}
    </>
  );
}
