// The identity user code of an organization runs as: a leased run uid in the organization's own group.
import type { DataSource } from 'typeorm';
import type { Sandbox, SandboxIdentity } from '../runtime/sandbox/sandbox';

/** Leases a run identity for code of `organizationId`; SANDBOX=off: undefined. The caller releases it. */
export async function sandboxIdentityFor(
  ds: DataSource,
  sandbox: Sandbox,
  organizationId: string,
): Promise<SandboxIdentity | undefined> {
  if (!sandbox.enabled) return undefined;
  const [row]: Array<{ sandbox_index: number }> = await ds.query(
    `SELECT sandbox_index FROM organizations WHERE organization_id = $1`,
    [organizationId],
  );
  if (!row) throw new Error(`organization ${organizationId} not found`);
  return sandbox.identity(sandbox.gidOf(row.sandbox_index));
}
