// One run: its arguments or input, output, attempt and the limits it executes under, status timeline (its SYSTEM
// events), every event and its log lines as they come (the SSE stream; log lines are re-read while the run goes on), Cancel, and its workflow in the
// Temporal UI; Replay of a finished run opens the new run.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useCallback, useEffect } from 'react';
import {
  canCancel,
  canReplay,
  cancelRun,
  fetchLogs,
  fetchRun,
  fetchRunLimits,
  hasEventStream,
  isTerminal,
  limitPhrases,
  replayRun,
  RUN_KINDS,
  type RunEvent,
  type RunKind,
} from '../api/runs';
import { queryKeys } from '../api/query-keys';
import { useRunEvents } from '../live/use-run-events';
import { ErrorBox, Json, Section, StatusBadge, Time } from '../ui';
import { Writes } from '../role';

const LOG_POLL_MS = 1000;
const RECORD_POLL_MS = 3000;

/** Where the Temporal UI shows this installation's namespace (a meta tag the api writes into the page). */
const temporalUi = () =>
  document.querySelector<HTMLMetaElement>('meta[name="tarmac-temporal-ui"]')?.content || undefined;

export function RunDetailPage() {
  const { kind: kindParam, runId } = useParams({ from: '/runs/$kind/$runId' });
  const kind = (RUN_KINDS.includes(kindParam as RunKind) ? kindParam : 'structure') as RunKind;
  const queries = useQueryClient();

  const run = useQuery({
    queryKey: queryKeys.run(kind, runId),
    queryFn: () => fetchRun(kind, runId),
    refetchInterval: (q) =>
      q.state.data && !isTerminal(q.state.data.status) && !hasEventStream(kind) ? RECORD_POLL_MS : false,
  });
  const running = !!run.data && !isTerminal(run.data.status);
  // Recorded by the worker when the run starts (today's settings until then): read again at each status.
  const limits = useQuery({
    queryKey: queryKeys.runLimits(runId, run.data?.status),
    queryFn: () => fetchRunLimits(runId),
    placeholderData: keepPreviousData,
  });
  const logs = useQuery({
    queryKey: queryKeys.runLogs(kind, runId),
    queryFn: () => fetchLogs(kind, runId),
    refetchInterval: running ? LOG_POLL_MS : false,
  });

  // A SYSTEM event is a change of status: read the record (and the last log lines) again.
  const onEvent = useCallback(
    (e: RunEvent) => {
      if (e.origin !== 'SYSTEM') return;
      void queries.invalidateQueries({ queryKey: queryKeys.run(kind, runId) });
      void queries.invalidateQueries({ queryKey: queryKeys.runLogs(kind, runId) });
    },
    [queries, kind, runId],
  );
  const stream = useRunEvents(kind, runId, hasEventStream(kind), onEvent);
  useEffect(() => {
    if (stream.state !== 'ended') return;
    void queries.invalidateQueries({ queryKey: queryKeys.run(kind, runId) });
    void queries.invalidateQueries({ queryKey: queryKeys.runLogs(kind, runId) });
  }, [stream.state, queries, kind, runId]);

  const cancel = useMutation({
    mutationFn: () => cancelRun(kind, runId),
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.run(kind, runId) }),
  });

  const navigate = useNavigate();
  const replay = useMutation({
    mutationFn: () => replayRun(kind, runId),
    onSuccess: (newRunId) => navigate({ to: '/runs/$kind/$runId', params: { kind, runId: newRunId } }),
  });

  const r = run.data;
  const ui = temporalUi();
  const workflowId = `${kind}-run-${runId}`;
  const timeline = stream.events.filter((e) => e.origin === 'SYSTEM');

  return (
    <>
      <header className="page-header">
        <h1>
          {kind[0].toUpperCase() + kind.slice(1)} run <span className="mono">{runId}</span>
        </h1>
        <div className="actions">
          {r && <StatusBadge status={r.status} />}
          <Writes>
            {canCancel(kind) && r && !isTerminal(r.status) && (
              <button type="button" className="danger" onClick={() => cancel.mutate()} disabled={cancel.isPending}>
                {cancel.isPending ? 'Cancelling…' : 'Cancel run'}
              </button>
            )}
            {canReplay(kind) && r && isTerminal(r.status) && (
              <button type="button" onClick={() => replay.mutate()} disabled={replay.isPending}>
                {replay.isPending ? 'Replaying…' : 'Replay'}
              </button>
            )}
          </Writes>
          {ui && (
            <a href={`${ui}/workflows/${encodeURIComponent(workflowId)}`} target="_blank" rel="noreferrer">
              Workflow in Temporal UI
            </a>
          )}
        </div>
      </header>
      <ErrorBox error={run.error ?? limits.error ?? cancel.error ?? replay.error} />
      {r && (
        <dl className="facts">
          <dt>Resource</dt>
          <dd className="mono">{r.owner ?? '—'}</dd>
          <dt>Deployment</dt>
          <dd className="mono">{r.deployment_id ?? '—'}</dd>
          <dt>Created</dt>
          <dd>
            <Time at={r.created_at} /> by <span className="mono">{r.created_by}</span>
          </dd>
          <dt>Started</dt>
          <dd>
            <Time at={r.started_at} />
          </dd>
          <dt>Completed</dt>
          <dd>
            <Time at={r.completed_at} />
          </dd>
          {r.replayed_from_run_id && (
            <>
              <dt>Replay of</dt>
              <dd>
                <Link to="/runs/$kind/$runId" params={{ kind, runId: r.replayed_from_run_id }} className="mono">
                  {r.replayed_from_run_id}
                </Link>
              </dd>
            </>
          )}
          {r.attempt !== undefined && (
            <>
              <dt>Attempt</dt>
              <dd data-testid="attempt">{r.attempt}</dd>
            </>
          )}
          {r.attempts && r.attempts.length > 1 && (
            <>
              <dt>Attempts</dt>
              <dd data-testid="attempts">
                {r.attempts.map((a) => `${a.attempt}: ${a.status}${a.reason ? ` (${a.reason})` : ''}`).join(' · ')}
              </dd>
            </>
          )}
          {r.idempotency_key && (
            <>
              <dt>Idempotency key</dt>
              <dd className="mono">{r.idempotency_key}</dd>
            </>
          )}
          {r.concurrency_key && (
            <>
              <dt>Concurrency key</dt>
              <dd className="mono">{r.concurrency_key}</dd>
            </>
          )}
          <dt>Limits</dt>
          <dd data-testid="limits">{limits.data ? limitPhrases(limits.data).join(' · ') : '—'}</dd>
          <dt>Workflow</dt>
          <dd className="mono">{workflowId}</dd>
        </dl>
      )}
      <div className="grid">
        <Section title={r?.args ? 'Arguments' : 'Input'}>
          <Json label="Arguments" value={r?.args ?? r?.input} />
        </Section>
        <Section title="Output">
          <Json label="Output" value={r?.output} />
          {(r?.status_detail as { reason?: string } | null)?.reason === 'WaitingForApproval' && (
            <p className="waiting" role="status">
              {(r?.status_detail as { message?: string }).message ?? 'Waiting for approval'}:{' '}
              <Link to="/waitpoints">approve or reject it</Link>
            </p>
          )}
          {r?.status_detail != null && (
            <>
              <h3>Status detail</h3>
              <Json label="Status detail" value={r.status_detail} />
            </>
          )}
        </Section>
      </div>
      {hasEventStream(kind) && (
        <Section title="Status timeline" actions={<span className="muted stream-state">events: {stream.state}</span>}>
          <ol className="timeline">
            {timeline.map((e) => (
              <li key={e.event_id}>
                <Time at={new Date(e.timestamp * 1000).toISOString()} /> <strong>{e.type}</strong>
              </li>
            ))}
          </ol>
        </Section>
      )}
      <Section title="Logs" actions={running ? <span className="muted">live</span> : undefined}>
        {logs.data === undefined ? (
          <p className="muted">This kind of run has no log lines.</p>
        ) : logs.data.length === 0 && !running ? (
          <p className="muted">No log lines.</p>
        ) : (
          <pre className="logs" role="log" aria-label="Log lines" tabIndex={0}>
            {logs.data.join('\n')}
          </pre>
        )}
      </Section>
      {hasEventStream(kind) && (
        <Section title={`Events (${stream.events.length})`}>
          <table className="list" aria-label="Events">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Origin</th>
                <th scope="col">Type</th>
                <th scope="col">Payload</th>
              </tr>
            </thead>
            <tbody>
              {stream.events.map((e) => (
                <tr key={e.event_id}>
                  <td>
                    <Time at={new Date(e.timestamp * 1000).toISOString()} />
                  </td>
                  <td>{e.origin}</td>
                  <td>{e.type}</td>
                  <td className="mono payload">{JSON.stringify(e.payload)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
    </>
  );
}
