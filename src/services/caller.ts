// Who a service acts for: the authenticated caller (src/api/http/auth.ts makes it from an API key, or from a
// person's session cookie: src/services/accounts/sessions.ts).

import type { Role } from './accounts/roles';

/** Who is calling: every query is scoped to `organizationId`. */
export interface Caller {
  organizationId: string;
  /**
   * What the caller may do (src/api/http/route-roles.ts): its user's membership role, an organization key's own
   * role; a run's credential is a member.
   */
  role: Role;
  /** The user the key acts as; null for organization keys. A session's user. */
  userId: string | null;
  /** The credential: the API key's id, or the session's (rate limits count per credential). */
  apiKeyId: string;
  /** Written to `created_by` of records this caller creates: the user id, else the API key id. */
  actor: string;
  /** Set for a run's own credential (GT_CLOUD_API_KEY in user code): only that run may be touched. */
  runId: string | null;
  /** Set when a person's cookie session authenticated the request. */
  sessionId?: string;
}
