import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('users')
export class User {
  @PrimaryColumn('uuid') user_id: string;
  /** Stored lower-cased; unique. */
  @Column('text') email: string;
  @Column('text', { nullable: true }) name: string | null;
  /**
   * scrypt, in its self-describing stored form (src/security/passwords.ts); null until a password is set. Never
   * read unless asked for (`select: false`), so no answer that presents a user can carry it.
   */
  @Column('text', { nullable: true, select: false }) password_hash: string | null;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/** The roles of a membership, least first: each may do what the ones before it may (docs/people.md#roles). */
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** A user's membership of an organization. */
@Entity('memberships')
export class Membership {
  @PrimaryColumn('uuid') organization_id: string;
  @PrimaryColumn('uuid') user_id: string;
  @Column('text') role: Role;
  @Column('timestamptz') created_at: Date;
}

/** A person's cookie session in one organization (docs/people.md#sessions); deleted with its membership. */
@Entity('user_sessions')
export class UserSession {
  @PrimaryColumn('uuid') session_id: string;
  /** SHA-256 of the cookie's token; the token itself is never stored. */
  @Column('bytea') token_hash: Buffer;
  /** SHA-256 of the session's CSRF token (the tarmac_csrf cookie, echoed in X-CSRF-Token). */
  @Column('bytea') csrf_hash: Buffer;
  @Column('uuid') organization_id: string;
  @Column('uuid') user_id: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') last_seen_at: Date;
  @Column('timestamptz') expires_at: Date;
  @Column('text', { nullable: true }) address: string | null;
}

/** A one-time link that sets a user's password (docs/people.md#password-reset-links). */
@Entity('password_resets')
export class PasswordReset {
  /** SHA-256 of the link's token. */
  @PrimaryColumn('bytea') token_hash: Buffer;
  @Column('uuid') user_id: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') expires_at: Date;
  @Column('timestamptz', { nullable: true }) used_at: Date | null;
}
