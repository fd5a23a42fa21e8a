// The signed-in person's role in the organization (docs/people.md#roles), so that the console offers only what
// the api would let them do: a viewer sees no create, run or delete controls; settings are an admin's. The api
// enforces the roles whatever the console shows.
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { currentSession } from './api/sessions';
import { queryKeys } from './api/query-keys';
import type { Schemas } from './api/client';

export type Role = Schemas['Session']['role'];
export const ROLES: readonly Role[] = ['viewer', 'member', 'admin', 'owner'];

export const atLeast = (role: Role, needed: Role) => ROLES.indexOf(role) >= ROLES.indexOf(needed);

/** The session (read again every half minute: a role changed by an admin shows without a reload). */
export function useCurrentSession() {
  return useQuery({ queryKey: queryKeys.session, queryFn: currentSession, staleTime: 30_000 }).data ?? undefined;
}

/** Whether the signed-in person's role is `needed` or above (false until the session is known). */
export function useCan(needed: Role): boolean {
  const role = useCurrentSession()?.role;
  return role !== undefined && atLeast(role, needed);
}

/** Its children only for a role of `needs` or above (a member, by default: one who creates and runs). */
export function Writes({ needs = 'member', children }: { needs?: Role; children: ReactNode }) {
  return useCan(needs) ? <>{children}</> : null;
}
