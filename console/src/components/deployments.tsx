// A resource's deployments: status, what was deployed, and the build log the platform keeps (the tail of the
// build's output, kept for builds that failed; a successful one says which runtime it deployed).
import type { Schemas } from '../api/client';
import { Json, shortId, StatusBadge, Time } from '../ui';

type Deployment = Schemas['Deployment'];

function BuildLog({ deployment }: { deployment: Deployment }) {
  const detail = deployment.status_detail as
    { reason?: string; message?: string; build_output_tail?: string; runtime?: string } | null | undefined;
  if (!detail) return <span className="muted">—</span>;
  return (
    <details>
      <summary>
        {detail.reason ?? 'Detail'}
        {detail.message ? `: ${detail.message}` : ''}
      </summary>
      {detail.build_output_tail ? (
        <pre className="logs" aria-label={`Build log of ${shortId(deployment.deployment_id)}`} tabIndex={0}>
          {detail.build_output_tail}
        </pre>
      ) : (
        <Json label="Deployment detail" value={detail} />
      )}
    </details>
  );
}

export function DeploymentsTable({ deployments }: { deployments: Deployment[] | undefined }) {
  return (
    <table className="list" aria-label="Deployments">
      <thead>
        <tr>
          <th scope="col">Deployment</th>
          <th scope="col">Status</th>
          <th scope="col">Detail and build log</th>
          <th scope="col">Created</th>
          <th scope="col">Completed</th>
        </tr>
      </thead>
      <tbody>
        {deployments?.map((d) => (
          <tr key={d.deployment_id} data-deployment-id={d.deployment_id}>
            <td className="mono">{shortId(d.deployment_id)}</td>
            <td>
              <StatusBadge status={d.status} />
            </td>
            <td>
              <BuildLog deployment={d} />
            </td>
            <td>
              <Time at={d.created_at} />
            </td>
            <td>
              <Time at={d.completed_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
