// The dashboard: runs per status over a chosen window, their counts, the latest failures, queue depths and the
// structures' error rate and error types. Re-read every 10 s. Concurrency queues and schedules get their
// sections here once run control lands.
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import {
  queueDepths,
  recentFailures,
  runTimeline,
  statusCounts,
  structuresDashboard,
  TIMELINE_RUNS,
  WINDOWS,
} from '../api/dashboard';
import { queryKeys } from '../api/query-keys';
import { StatusChart } from '../components/status-chart';
import { ErrorBox, Section, shortId, StatusBadge, Time } from '../ui';

const REFRESH_MS = 10_000;

/** Why a run failed, in a few words: its reason, with the exit code of a program that exited non-zero. */
function reasonOf(detail: unknown): string {
  const d = detail as { reason?: string; exit_code?: number | null } | null | undefined;
  if (!d?.reason) return '—';
  return d.exit_code != null ? `${d.reason} (exit code ${d.exit_code})` : d.reason;
}

export function DashboardPage() {
  const [windowIndex, setWindowIndex] = useState(1);
  const span = WINDOWS[windowIndex];
  const live = { refetchInterval: REFRESH_MS };
  // The window ends at the time of each read.
  const timeline = useQuery({
    queryKey: queryKeys.dashboard.timeline(windowIndex),
    queryFn: () => runTimeline(span, Date.now()),
    ...live,
  });
  const counts = useQuery({
    queryKey: queryKeys.dashboard.counts(windowIndex),
    queryFn: () => statusCounts(span, Date.now()),
    ...live,
  });
  const structures = useQuery({
    queryKey: queryKeys.dashboard.structures(windowIndex),
    queryFn: () => structuresDashboard(span, Date.now()),
    ...live,
  });
  const queues = useQuery({ queryKey: queryKeys.dashboard.queues, queryFn: queueDepths, ...live });
  const failures = useQuery({ queryKey: queryKeys.dashboard.failures, queryFn: recentFailures, ...live });
  const errorRate = structures.data?.error_rate_gauge;

  return (
    <>
      <header className="page-header">
        <h1>Dashboard</h1>
        <label className="window-select">
          Window{' '}
          <select value={windowIndex} onChange={(e) => setWindowIndex(Number(e.target.value))}>
            {WINDOWS.map((w, i) => (
              <option key={w.label} value={i}>
                {w.label}
              </option>
            ))}
          </select>
        </label>
      </header>
      <ErrorBox error={timeline.error ?? counts.error ?? structures.error ?? queues.error ?? failures.error} />
      <Section title="Runs per status">
        <ul className="tiles" aria-label="Runs by status">
          {counts.data?.map((c) => (
            <li key={c.status}>
              <Link to="/runs" search={{ status: c.status }}>
                <StatusBadge status={c.status} /> <strong data-count={c.status}>{c.count}</strong>
              </Link>
            </li>
          ))}
        </ul>
        {timeline.data && <StatusChart buckets={timeline.data.buckets} bucketMs={span.bucketMs} />}
        {timeline.data && timeline.data.total > timeline.data.read && (
          <p className="muted">
            The bars show the latest {TIMELINE_RUNS} of {timeline.data.total} runs of the window.
          </p>
        )}
      </Section>
      <div className="grid">
        <Section title="Queue depths">
          <table className="list" aria-label="Queue depths">
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Queued runs</th>
              </tr>
            </thead>
            <tbody>
              {queues.data?.map((q) => (
                <tr key={q.kind}>
                  <td>
                    <Link to="/runs" search={{ kind: q.kind, status: 'QUEUED' }}>
                      {q.kind}
                    </Link>
                  </td>
                  <td data-queued={q.kind}>{q.queued}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted">Concurrency queues (per key) appear here once run control lands.</p>
        </Section>
        <Section title="Structure errors">
          {errorRate && (
            <>
              <p>
                Error rate <strong>{(errorRate.rate * 100).toFixed(1)} %</strong> of ended structure runs
              </p>
              <ul className="job-errors" aria-label="Error types">
                {errorRate.error_type_counts.map((e) => (
                  <li key={e.error_type}>
                    <span className="mono">{e.error_type}</span>: {e.count}
                  </li>
                ))}
              </ul>
            </>
          )}
        </Section>
      </div>
      <Section title="Recent failures">
        <table className="list" aria-label="Recent failures">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {failures.data?.map((r) => (
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
                <td className="mono">{reasonOf(r.status_detail)}</td>
                <td>
                  <Time at={r.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {failures.data && failures.data.length === 0 && <p className="muted">No failed run.</p>}
      </Section>
    </>
  );
}
