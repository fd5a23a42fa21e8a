// A resource's concurrency queue (docs/run-control.md#concurrency-keys-and-limits): running and queued runs per
// key against their limit, re-read while anything waits; pause (nothing new starts) and resume.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getQueue, setQueuePaused, type QueuedKind } from '../api/run-control';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Section, Time } from '../ui';
import { Writes } from '../role';

const BUSY_POLL_MS = 2000;

export function Queue({ kind, resourceId }: { kind: QueuedKind; resourceId: string }) {
  const queries = useQueryClient();
  const key = queryKeys.queue(kind, resourceId);
  const queue = useQuery({
    queryKey: key,
    queryFn: () => getQueue(kind, resourceId),
    refetchInterval: (q) => (q.state.data && q.state.data.running + q.state.data.queued > 0 ? BUSY_POLL_MS : false),
  });
  const pause = useMutation({
    mutationFn: (paused: boolean) => setQueuePaused(kind, resourceId, paused),
    onSettled: () => queries.invalidateQueries({ queryKey: key }),
  });
  const q = queue.data;
  const limits = q?.concurrency
    ? `at most ${q.concurrency.limit} per key (${q.concurrency.strategy ?? 'queue'})` +
      (q.total_limit != null ? `, ${q.total_limit} in all` : '')
    : 'no concurrency limit';

  return (
    <Section
      title="Queue"
      actions={
        q && (
          <Writes>
            <button type="button" disabled={pause.isPending} onClick={() => pause.mutate(!q.paused)}>
              {q.paused ? 'Resume' : 'Pause'}
            </button>
          </Writes>
        )
      }
    >
      <ErrorBox error={queue.error ?? pause.error} />
      {q && (
        <>
          <p>
            <strong data-testid="queue-state">{q.paused ? 'Paused' : 'Running'}</strong>
            {q.paused && (
              <>
                {' '}
                since <Time at={q.paused_at} />
              </>
            )}
            : {q.running} running, {q.queued} queued; {limits}.
          </p>
          {q.keys.length > 0 && (
            <table className="list" aria-label="Queue by key">
              <thead>
                <tr>
                  <th>Key</th>
                  <th>Running</th>
                  <th>Queued</th>
                  <th>Limit</th>
                </tr>
              </thead>
              <tbody>
                {q.keys.map((k) => (
                  <tr key={k.key ?? ''}>
                    <td className="mono">{k.key === null ? '—' : k.key === '' ? '(default)' : k.key}</td>
                    <td>{k.running}</td>
                    <td>{k.queued}</td>
                    <td>{k.limit ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </Section>
  );
}
