// "Waiting for you": the organization's waitpoints that wait for someone (docs/waitpoints.md), re-read every few
// seconds. Each says what waits for what: the function the assistant's model called, its tool and arguments,
// the run (its page shows the wait live) and when the wait times out. A member approves, with the arguments as
// they are or edited, or rejects, with a reason the model reads.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { completeWaitpoint, listWaiting, type Waitpoint } from '../api/waitpoints';
import { queryKeys } from '../api/query-keys';
import { parseJson } from '../components/json-input';
import { ErrorBox, Json, Section, shortId, Time } from '../ui';
import { useCan } from '../role';

const REFRESH_MS = 3000;

export function WaitpointsPage() {
  const waiting = useQuery({ queryKey: queryKeys.waiting, queryFn: listWaiting, refetchInterval: REFRESH_MS });
  const items = waiting.data?.waitpoints ?? [];
  return (
    <>
      <h1>Waiting for you</h1>
      <p className="muted">
        Calls of tools that require approval. The run waits, holding nothing, until its call is approved or rejected, or
        until it times out (then the call is refused).
      </p>
      <ErrorBox error={waiting.error} />
      {waiting.data && items.length === 0 && <p className="muted">Nothing waits for approval.</p>}
      {items.map((w) => (
        <WaitingCall key={w.waitpoint_id} waitpoint={w} />
      ))}
    </>
  );
}

function WaitingCall({ waitpoint: w }: { waitpoint: Waitpoint }) {
  const queries = useQueryClient();
  const [args, setArgs] = useState(JSON.stringify(w.subject.arguments ?? {}, null, 2));
  const [reason, setReason] = useState('');
  const parsed = parseJson(args);
  const complete = useMutation({
    mutationFn: (approved: boolean) =>
      completeWaitpoint(w.waitpoint_id, {
        approved,
        ...(approved && JSON.stringify(parsed.value) !== JSON.stringify(w.subject.arguments)
          ? { arguments: parsed.value as Record<string, unknown> }
          : {}),
        ...(reason.trim() ? { reason: reason.trim() } : {}),
      }),
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.waiting }),
  });
  const id = shortId(w.waitpoint_id);
  const canComplete = useCan('member');
  return (
    <Section title={`${w.subject.function_name} (tool ${w.subject.tool_name})`}>
      <dl className="facts" data-waitpoint-id={w.waitpoint_id}>
        <dt>Run</dt>
        <dd>
          <Link to="/runs/$kind/$runId" params={{ kind: 'assistant', runId: w.run_id }}>
            {shortId(w.run_id)}
          </Link>
        </dd>
        <dt>Asked</dt>
        <dd>
          <Time at={w.created_at} />
        </dd>
        <dt>Times out</dt>
        <dd>
          <Time at={w.expires_at} />
        </dd>
      </dl>
      {!canComplete && <Json label={`Arguments of ${id}`} value={w.subject.arguments} />}
      {canComplete && (
        <form className="run-form" onSubmit={(e) => e.preventDefault()}>
          <label htmlFor={`args-${id}`}>Arguments of the call</label>
          <textarea id={`args-${id}`} rows={4} value={args} onChange={(e) => setArgs(e.target.value)} />
          {parsed.error && <p className="error">{parsed.error}</p>}
          <label htmlFor={`reason-${id}`}>Reason (optional)</label>
          <input id={`reason-${id}`} value={reason} maxLength={2000} onChange={(e) => setReason(e.target.value)} />
          <div className="actions">
            <button type="button" disabled={!!parsed.error || complete.isPending} onClick={() => complete.mutate(true)}>
              Approve
            </button>
            <button
              type="button"
              className="danger"
              disabled={complete.isPending}
              onClick={() => complete.mutate(false)}
            >
              Reject
            </button>
          </div>
        </form>
      )}
      <ErrorBox error={complete.error} />
    </Section>
  );
}
