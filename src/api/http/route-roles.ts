// What each route needs of its caller's role: the one table, read by the route builder before any handler runs
// (docs/people.md#roles). A read (GET) needs a viewer, a write a member, unless the table says otherwise.
// Handlers may narrow further by whom a request is about (a key for another user, a member of a higher role),
// never widen.
import type { Role } from '../../services/accounts/roles';

const ROUTE_ROLES: Readonly<Record<string, Role>> = {
  // A viewer signs itself out, answers its own invites and makes keys for itself (they act as a viewer).
  DeleteCurrentSession: 'viewer',
  DeleteSessions: 'viewer',
  RespondToInvite: 'viewer',
  CreateApiKey: 'viewer',

  // Reads that start work or hand out a credential.
  CreateFunctionExecutionGet: 'member',
  InvokeStructureWebhookGet: 'member',
  GetToken: 'member',

  // Admins manage keys, secrets, integrations, connections and members, and read the audit log.
  ListOrganizationApiKeys: 'admin',
  CreateOrganizationApiKey: 'admin',
  UpdateApiKey: 'admin',
  DeleteApiKey: 'admin',
  CreateSecret: 'admin',
  UpdateSecret: 'admin',
  DeleteSecret: 'admin',
  CreateIntegration: 'admin',
  UpdateIntegration: 'admin',
  DeleteIntegration: 'admin',
  CancelIntegrationDelivery: 'admin',
  CreateConnection: 'admin',
  DeleteConnection: 'admin',
  CreateInvite: 'admin',
  DeleteInvite: 'admin',
  UpdateOrganizationMember: 'admin',
  DeleteOrganizationUser: 'admin',
  ListAuditEvents: 'admin',

  // Owners also manage billing.
  CreateCheckoutSession: 'owner',
  CreateBillingManagementUrl: 'owner',
};

/** The least role that may call the route. */
export function roleNeeded(route: { operationId: string; method: string }): Role {
  return ROUTE_ROLES[route.operationId] ?? (route.method === 'get' ? 'viewer' : 'member');
}

/** Operations the table names (a test checks each is a route). */
export function operationsInRoleTable(): string[] {
  return Object.keys(ROUTE_ROLES);
}
