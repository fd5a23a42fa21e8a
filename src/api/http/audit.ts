// Writes an audited request to the audit log (src/services/accounts/audit.ts): the route builder calls it after
// the handler, whether it answered or threw. A route without a caller (a sign-in) names who it was about with
// noteForAudit. A failure to write is logged and counted, never turned into a failed answer: what the request
// did is done by then.
import type { Context } from 'koa';
import type { Deps } from '../deps';
import type { Caller } from '../../services/caller';
import { appendAuditEvent } from '../../services/accounts/audit';
import { HttpError } from '../../errors';
import { clientAddress } from './session-cookies';

/** Who a request without a caller was about, and what else to record (never a secret). */
export interface AuditNote {
  organizationId?: string | null;
  userId?: string | null;
  detail?: Record<string, unknown>;
  /** The status a refusal answered as a redirect stands for (a browser's OIDC callback is sent to a page). */
  status?: number;
}

export function noteForAudit(ctx: Context, note: AuditNote): void {
  ctx.state.audit = { ...(ctx.state.audit as AuditNote | undefined), ...note };
}

export async function auditRequest(
  ctx: Context,
  deps: Deps,
  /** The route's operationId, and what of its body it records (RouteSpec.audit). */
  route: { operationId: string; pick?: (body: any) => Record<string, unknown> },
  request: { caller: Caller | undefined; body: unknown; failure: unknown },
): Promise<void> {
  const { caller, failure } = request;
  const note = (ctx.state.audit as AuditNote | undefined) ?? {};
  const status =
    note.status ?? (failure === undefined ? ctx.status : failure instanceof HttpError ? failure.status : 500);
  const picked = route.pick && request.body ? route.pick(request.body) : {};
  const organizationId = caller?.organizationId ?? note.organizationId ?? null;
  try {
    await appendAuditEvent(deps.ds, {
      organizationId,
      operation: route.operationId,
      method: ctx.method,
      path: ctx.path,
      status,
      userId: caller ? caller.userId : (note.userId ?? null),
      apiKeyId: caller && !caller.sessionId ? caller.apiKeyId : null,
      sessionId: caller?.sessionId ?? null,
      address: clientAddress(ctx),
      detail: { ...picked, ...note.detail },
    });
  } catch (err) {
    deps.log.error({ err, operation: route.operationId, organizationId }, 'the audit log refused an event');
  }
}
