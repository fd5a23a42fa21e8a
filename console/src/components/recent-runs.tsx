// The latest runs of one resource (GET /api/runs filtered by kind and resource), kept current by the stream of
// run changes (re-read while one is open when the stream is down), each a link to its run page; the full list
// is the Runs page, filtered.
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { queryKeys } from '../api/query-keys';
import { isTerminal, listRecentRuns, type RunKind } from '../api/runs';
import { useLiveRuns } from '../live/use-live-runs';
import { ErrorBox, Section, shortId, StatusBadge, Time } from '../ui';

const LIVE_MS = 2000;

export function RecentRuns({ kind, resourceId }: { kind: RunKind; resourceId: string }) {
  const { live } = useLiveRuns();
  const runs = useQuery({
    queryKey: queryKeys.runs.recent(kind, resourceId),
    queryFn: () => listRecentRuns(kind, resourceId),
    refetchInterval: (q) => (!live && q.state.data?.runs.some((r) => !isTerminal(r.status)) ? LIVE_MS : false),
  });
  return (
    <Section
      title="Recent runs"
      actions={
        <Link to="/runs" search={{ kind, resource_id: resourceId }}>
          All its runs
        </Link>
      }
    >
      <ErrorBox error={runs.error} />
      <table className="list" aria-label="Recent runs">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {runs.data?.runs.map((r) => (
            <tr key={r.run_id} data-run-id={r.run_id}>
              <td>
                <Link to="/runs/$kind/$runId" params={{ kind, runId: r.run_id }} className="mono">
                  {shortId(r.run_id)}
                </Link>
              </td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td>
                <Time at={r.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {runs.data && runs.data.runs.length === 0 && <p className="muted">No run yet.</p>}
    </Section>
  );
}
