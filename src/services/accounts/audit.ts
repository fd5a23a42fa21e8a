// The audit log (docs/people.md#audit-log): who (a user, a key, a session, or nobody yet: a sign-in), when, from
// which address, did what (the operation, its path with the ids, the answer's status, a little detail such as
// the email a sign-in tried). Appended by the route builder for the routes it audits, never updated; read by
// the organization, newest first; deleted by the reconciler after AUDIT_RETENTION_DAYS.
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { paginate, type PageRequest } from '../../persistence/pagination';

export interface AuditEntry {
  /** null only for a failed sign-in with an email unknown here. */
  organizationId: string | null;
  operation: string;
  method: string;
  path: string;
  status: number;
  userId: string | null;
  apiKeyId: string | null;
  sessionId: string | null;
  address: string | null;
  detail: Record<string, unknown>;
}

export async function appendAuditEvent(ds: DataSource, e: AuditEntry): Promise<void> {
  await ds.query(
    `INSERT INTO audit_events
       (audit_event_id, organization_id, operation, method, path, status, user_id, api_key_id, session_id, address, detail)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      randomUUID(),
      e.organizationId,
      e.operation,
      e.method,
      e.path,
      e.status,
      e.userId,
      e.apiKeyId,
      e.sessionId,
      e.address,
      JSON.stringify(e.detail),
    ],
  );
}

export interface AuditFilters {
  operation?: string;
  user_id?: string;
  api_key_id?: string;
  /** Only failed (status ≥ 400) or only succeeded requests. */
  outcome?: 'SUCCEEDED' | 'FAILED';
  created_after?: Date;
  created_before?: Date;
}

interface AuditRow {
  audit_event_id: string;
  created_at: Date;
  operation: string;
  method: string;
  path: string;
  status: number;
  user_id: string | null;
  api_key_id: string | null;
  session_id: string | null;
  address: string | null;
  detail: Record<string, unknown>;
}

/** The organization's audit events, newest first, filtered. */
export async function listAuditEvents(ds: DataSource, organizationId: string, f: AuditFilters, page: PageRequest) {
  const where = ['organization_id = $1'];
  const args: unknown[] = [organizationId];
  const add = (clause: string, value: unknown) => {
    args.push(value);
    where.push(clause.replace('?', `$${args.length}`));
  };
  if (f.operation) add('operation = ?', f.operation);
  if (f.user_id) add('user_id = ?', f.user_id);
  if (f.api_key_id) add('api_key_id = ?', f.api_key_id);
  if (f.outcome) where.push(f.outcome === 'FAILED' ? 'status >= 400' : 'status < 400');
  // At the precision the events are presented with (ms), so that an event's own created_at excludes it.
  if (f.created_after) add("date_trunc('milliseconds', created_at) > ?", f.created_after);
  if (f.created_before) add("date_trunc('milliseconds', created_at) < ?", f.created_before);
  const condition = where.join(' AND ');
  const [{ total }]: Array<{ total: number }> = await ds.query(
    `SELECT count(*)::int AS total FROM audit_events WHERE ${condition}`,
    args,
  );
  const rows: AuditRow[] = await ds.query(
    `SELECT audit_event_id, created_at, operation, method, path, status, user_id, api_key_id, session_id, address, detail
       FROM audit_events WHERE ${condition}
      ORDER BY created_at DESC, audit_event_id DESC
      LIMIT ${page.pageSize} OFFSET ${(page.page - 1) * page.pageSize}`,
    args,
  );
  return { rows, pagination: paginate(page, total) };
}

/** Deletes events older than the retention, at most `limit` (the reconciler, every minute); answers how many. */
export async function sweepOldAuditEvents(ds: DataSource, retentionDays: number, limit = 10_000): Promise<number> {
  const [, deleted] = (await ds.query(
    `DELETE FROM audit_events WHERE ctid IN
       (SELECT ctid FROM audit_events WHERE created_at < now() - make_interval(days => $1) LIMIT $2)`,
    [retentionDays, limit],
  )) as [unknown[], number];
  return deleted;
}

/**
 * The user of an email (or id) and the organization their events belong to when a request has no caller (a
 * sign-in, a password set by link): the one a sign-in enters by default, their oldest membership.
 */
export async function auditSubjectOf(
  ds: DataSource,
  user: { email: string } | { userId: string },
): Promise<{ userId: string | null; organizationId: string | null }> {
  const [row]: Array<{ user_id: string; organization_id: string | null }> = await ds.query(
    `SELECT u.user_id, m.organization_id FROM users u LEFT JOIN memberships m ON m.user_id = u.user_id
      WHERE ${'email' in user ? 'u.email = $1' : 'u.user_id = $1'}
      ORDER BY m.created_at, m.organization_id LIMIT 1`,
    ['email' in user ? user.email.trim().toLowerCase() : user.userId],
  );
  return { userId: row?.user_id ?? null, organizationId: row?.organization_id ?? null };
}
