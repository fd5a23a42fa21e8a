// The organization's data connectors (paged by the server): type, the bucket they fill, schedule; each opens
// its jobs. Connectors are created through the API (their config depends on the type: docs/data-connectors.md).
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { listDataConnectors } from '../api/data-connectors';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, shortId, Time } from '../ui';

export function DataConnectorsPage() {
  const [page, setPage] = useState(1);
  const connectors = useQuery({
    queryKey: queryKeys.dataConnectors(page),
    placeholderData: keepPreviousData,
    queryFn: () => listDataConnectors(page),
  });
  return (
    <>
      <h1>Data connectors</h1>
      <ErrorBox error={connectors.error} />
      <table className="list" aria-label="Data connectors">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Bucket</th>
            <th scope="col">Schedule</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {connectors.data?.data_connectors.map((c) => (
            <tr key={c.data_connector_id}>
              <td>
                <Link to="/data-connectors/$dataConnectorId" params={{ dataConnectorId: c.data_connector_id }}>
                  {c.name}
                </Link>
              </td>
              <td>{c.type}</td>
              <td>
                {c.bucket_id ? (
                  <Link to="/buckets/$bucketId" params={{ bucketId: c.bucket_id }} className="mono">
                    {shortId(c.bucket_id)}
                  </Link>
                ) : (
                  '—'
                )}
              </td>
              <td className="mono">{c.schedule_expression ?? '—'}</td>
              <td>
                <Time at={c.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {connectors.data && connectors.data.data_connectors.length === 0 && (
        <p className="muted">No data connector yet: create one with POST /api/data-connectors.</p>
      )}
      {connectors.data && <Pager page={page} totalPages={connectors.data.pagination.total_pages} onPage={setPage} />}
    </>
  );
}
