// One integration: its handler URL and what it starts, and its deliveries, newest first: when each came, the
// handler's answer (verdict and HTTP status), its attempt (deliveries that share the sender's delivery id are
// attempts of one delivery), the status of the work it started, its errors and the runs it started.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { getIntegration, listDeliveries, type IntegrationDelivery } from '../api/integrations';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, Section, shortId, StatusBadge, Time } from '../ui';

const LIVE_MS = 3000;
type Delivery = IntegrationDelivery;

/** "k of n" per delivery: its rank among the page's deliveries with the same delivery key, oldest first. */
function attempts(deliveries: Delivery[]): Map<string, string> {
  const byKey = new Map<string, Delivery[]>();
  for (const d of [...deliveries].reverse()) {
    if (!d.delivery_key) continue;
    byKey.set(d.delivery_key, [...(byKey.get(d.delivery_key) ?? []), d]);
  }
  const out = new Map<string, string>();
  for (const group of byKey.values()) group.forEach((d, i) => out.set(d.delivery_id, `${i + 1} of ${group.length}`));
  return out;
}

function StartedRuns({ d }: { d: Delivery }) {
  const runs = [
    ...d.structure_run_ids.map((id) => ({ kind: 'structure' as const, id })),
    ...d.assistant_run_ids.map((id) => ({ kind: 'assistant' as const, id })),
  ];
  if (!runs.length) return <span className="muted">—</span>;
  return (
    <>
      {runs.map((r) => (
        <Link key={r.id} to="/runs/$kind/$runId" params={{ kind: r.kind, runId: r.id }} className="mono">
          {r.kind} {shortId(r.id)}{' '}
        </Link>
      ))}
    </>
  );
}

export function IntegrationPage() {
  const { integrationId } = useParams({ from: '/integrations/$integrationId' });
  const [page, setPage] = useState(1);
  const integration = useQuery({
    queryKey: queryKeys.integration(integrationId),
    queryFn: () => getIntegration(integrationId),
  });
  const deliveries = useQuery({
    queryKey: queryKeys.deliveries(integrationId, page),
    placeholderData: keepPreviousData,
    queryFn: () => listDeliveries(integrationId, page),
    refetchInterval: LIVE_MS,
  });
  const i = integration.data;
  const rows = deliveries.data?.deliveries ?? [];
  const attempt = attempts(rows);
  return (
    <>
      <header className="page-header">
        <h1>{i?.name ?? 'Integration'}</h1>
        <Link to="/integrations">All integrations</Link>
      </header>
      <ErrorBox error={integration.error} />
      {i && (
        <dl className="facts">
          <dt>Type</dt>
          <dd>{i.type}</dd>
          <dt>Handler</dt>
          <dd className="mono">
            {window.location.origin}/api/integrations/{i.integration_id}/handler
          </dd>
          <dt>Starts</dt>
          <dd className="mono">{[...i.structure_ids, ...i.assistant_ids].join(', ') || '—'}</dd>
        </dl>
      )}
      <Section title="Deliveries">
        <ErrorBox error={deliveries.error} />
        <table className="list" aria-label="Deliveries">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Event</th>
              <th scope="col">Answer</th>
              <th scope="col">Attempt</th>
              <th scope="col">Work</th>
              <th scope="col">Errors</th>
              <th scope="col">Runs</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.delivery_id} data-delivery-id={d.delivery_id}>
                <td>
                  <Time at={d.received_at} />
                </td>
                <td className="mono">{d.event ?? '—'}</td>
                <td>
                  <span className="mono">{d.http_status}</span> <span data-verdict={d.verdict}>{d.verdict}</span>
                </td>
                <td>
                  {attempt.get(d.delivery_id) ?? '1 of 1'}
                  {d.delivery_key && <div className="mono muted">{d.delivery_key}</div>}
                </td>
                <td>{d.status ? <StatusBadge status={d.status} /> : <span className="muted">—</span>}</td>
                <td>
                  {d.errors.length ? (
                    <ul className="job-errors">
                      {d.errors.map((e, n) => (
                        <li key={n}>
                          <strong>{e.type}</strong>: {e.message}
                        </li>
                      ))}
                    </ul>
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  <StartedRuns d={d} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {deliveries.data && rows.length === 0 && <p className="muted">No delivery yet.</p>}
        {deliveries.data && <Pager page={page} totalPages={deliveries.data.pagination.total_pages} onPage={setPage} />}
      </Section>
    </>
  );
}
