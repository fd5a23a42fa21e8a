// The organization's integrations (paged by the server): type and what they start; each opens its deliveries.
// Integrations are created through the API (docs/integrations.md: their config holds the signing secrets).
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { listIntegrations } from '../api/integrations';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, Time } from '../ui';

export function IntegrationsPage() {
  const [page, setPage] = useState(1);
  const integrations = useQuery({
    queryKey: queryKeys.integrations(page),
    placeholderData: keepPreviousData,
    queryFn: () => listIntegrations(page),
  });
  return (
    <>
      <h1>Integrations</h1>
      <ErrorBox error={integrations.error} />
      <table className="list" aria-label="Integrations">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Starts</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {integrations.data?.integrations.map((i) => (
            <tr key={i.integration_id}>
              <td>
                <Link to="/integrations/$integrationId" params={{ integrationId: i.integration_id }}>
                  {i.name}
                </Link>
              </td>
              <td>{i.type}</td>
              <td>
                {i.structure_ids.length} structures, {i.assistant_ids.length} assistants
              </td>
              <td>
                <Time at={i.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {integrations.data && integrations.data.integrations.length === 0 && (
        <p className="muted">No integration yet: create one with POST /api/integrations.</p>
      )}
      {integrations.data && (
        <Pager page={page} totalPages={integrations.data.pagination.total_pages} onPage={setPage} />
      )}
    </>
  );
}
