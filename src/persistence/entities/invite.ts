import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Role } from './user';

export const INVITE_STATUSES = ['PENDING', 'ACCEPTED', 'REJECTED', 'EXPIRED'] as const;
export type InviteStatus = (typeof INVITE_STATUSES)[number];

@Entity('invites')
export class Invite {
  @PrimaryColumn('uuid') invite_id: string;
  @Column('uuid') organization_id: string;
  /** Stored lower-cased. */
  @Column('text') email: string;
  @Column('text') status: InviteStatus;
  /** The role the invitee gets on accepting. */
  @Column('text') role: Role;
  @Column('timestamptz') expires_at: Date;
  @Column('timestamptz', { nullable: true }) responded_at: Date | null;
  @Column('text') created_by: string;
  /** SHA-256 of the invite link's token (src/security/secret-tokens.ts); null on invites made before links. */
  @Column('bytea', { nullable: true, select: false }) link_token_hash?: Buffer | null;
  /** When the mail with its link was sent (SMTP_URL); null before, or without mail. */
  @Column('timestamptz', { nullable: true }) mailed_at?: Date | null;
  /** Why the mail was given up, after its retries. */
  @Column('text', { nullable: true }) mail_error?: string | null;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
