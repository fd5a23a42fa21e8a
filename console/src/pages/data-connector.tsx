// One data connector: what it fetches, and its data jobs with status, bytes ingested and per-item errors
// (re-read while one is open); Run a job starts one, Cancel stops an open one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { cancelDataJob, getDataConnector, listDataJobs, startDataJob } from '../api/data-connectors';
import { queryKeys } from '../api/query-keys';
import { isTerminal } from '../api/runs';
import { ErrorBox, Json, Section, shortId, StatusBadge, Time } from '../ui';
import { Writes } from '../role';

const OPEN_POLL_MS = 1500;

export function DataConnectorPage() {
  const { dataConnectorId } = useParams({ from: '/data-connectors/$dataConnectorId' });
  const queries = useQueryClient();
  const connector = useQuery({
    queryKey: queryKeys.dataConnector(dataConnectorId),
    queryFn: () => getDataConnector(dataConnectorId),
  });
  const jobs = useQuery({
    queryKey: queryKeys.dataJobs(dataConnectorId),
    queryFn: () => listDataJobs(dataConnectorId),
    refetchInterval: (q) => (q.state.data?.data_jobs.some((j) => !isTerminal(j.status)) ? OPEN_POLL_MS : false),
  });
  const refresh = () => void queries.invalidateQueries({ queryKey: queryKeys.dataJobs(dataConnectorId) });
  const start = useMutation({
    mutationFn: () => startDataJob(dataConnectorId),
    onSettled: refresh,
  });
  const cancel = useMutation({
    mutationFn: cancelDataJob,
    onSettled: refresh,
  });
  const c = connector.data;
  return (
    <>
      <header className="page-header">
        <h1>{c?.name ?? 'Data connector'}</h1>
        <Link to="/data-connectors">All data connectors</Link>
      </header>
      <ErrorBox error={connector.error} />
      {c && (
        <dl className="facts">
          <dt>Type</dt>
          <dd>{c.type}</dd>
          <dt>Bucket</dt>
          <dd>
            {c.bucket_id ? (
              <Link to="/buckets/$bucketId" params={{ bucketId: c.bucket_id }} className="mono">
                {c.bucket_id}
              </Link>
            ) : (
              '—'
            )}
          </dd>
          <dt>Schedule</dt>
          <dd className="mono">{c.schedule_expression ?? 'none'}</dd>
          <dt>Config</dt>
          <dd>
            <Json label="Config" value={c.config} />
          </dd>
        </dl>
      )}
      <Section
        title="Data jobs"
        actions={
          <Writes>
            <button type="button" onClick={() => start.mutate()} disabled={start.isPending}>
              Run a job
            </button>
          </Writes>
        }
      >
        <ErrorBox error={jobs.error ?? start.error ?? cancel.error} />
        <table className="list" aria-label="Data jobs">
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Status</th>
              <th scope="col">Ingested</th>
              <th scope="col">Errors</th>
              <th scope="col">Created</th>
              <th scope="col">Completed</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {jobs.data?.data_jobs.map((j) => (
              <tr key={j.data_job_id} data-job-id={j.data_job_id}>
                <td className="mono">{shortId(j.data_job_id)}</td>
                <td>
                  <StatusBadge status={j.status} />
                </td>
                <td>{j.bytes_ingested ?? 0} bytes</td>
                <td>
                  {j.errors?.length ? (
                    <ul className="job-errors">
                      {j.errors.map((e, i) => (
                        <li key={i}>
                          <strong>{e.type}</strong> {e.path && <span className="mono">{e.path}</span>}: {e.message}
                        </li>
                      ))}
                    </ul>
                  ) : j.status_detail != null ? (
                    <Json label="Job detail" value={j.status_detail} />
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  <Time at={j.created_at} />
                </td>
                <td>
                  <Time at={j.completed_at} />
                </td>
                <td>
                  <Writes>
                    {!isTerminal(j.status) && (
                      <button type="button" className="danger" onClick={() => cancel.mutate(j.data_job_id)}>
                        Cancel
                      </button>
                    )}
                  </Writes>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {jobs.data && jobs.data.data_jobs.length === 0 && <p className="muted">No job yet.</p>}
      </Section>
    </>
  );
}
