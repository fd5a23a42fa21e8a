// Comparing roles (src/persistence/entities/user.ts lists them, least first; docs/people.md#roles). What each
// route needs is one table, src/api/http/route-roles.ts.
import { forbidden } from '../../errors';
import { ROLES, type Role } from '../../persistence/entities/user';

export { ROLES, type Role };

export function atLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** The refusal of a caller whose role is below what it asked for. */
export function roleRefused(role: Role, needed: Role, what: string) {
  return forbidden(`${what} needs the ${needed} role or above; this credential acts as ${role}`);
}
