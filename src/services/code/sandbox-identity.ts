// The identity user code of an organization runs as: a leased run uid in the organization's own group.
import type { DataSource } from 'typeorm';
import { Organization } from '../../persistence/entities/organization';
import type { Sandbox, SandboxIdentity } from '../../runtime/sandbox/sandbox';

/** Leases a run identity for code of `organizationId`; SANDBOX=off: undefined. The caller releases it. */
export async function sandboxIdentityFor(
  ds: DataSource,
  sandbox: Sandbox,
  organizationId: string,
  memoryBytes: number,
): Promise<SandboxIdentity | undefined> {
  if (!sandbox.enabled) return undefined;
  const organization = await ds.getRepository(Organization).findOneByOrFail({ organization_id: organizationId });
  return sandbox.identity(sandbox.gidOf(organization.sandbox_index), memoryBytes);
}
