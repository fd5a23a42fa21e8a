import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A connection to an outside provider (a code host account): its OAuth tokens, sealed (src/security/secret-box.ts). */
@Entity('connections')
export class Connection {
  @PrimaryColumn('uuid') connection_id: string;
  @Column('uuid') organization_id: string;
  /** `codehost` (the only type served). */
  @Column('text') type: string;
  @Column('text') name: string;
  /** Sealed, bound to `<connection_id>:access`; only GetToken and deployments open it. */
  @Column('bytea') access_token_encrypted: Buffer;
  @Column('bytea', { nullable: true }) refresh_token_encrypted: Buffer | null;
  /** When the access token expires (null: it does not). */
  @Column('timestamptz', { nullable: true }) expires_at: Date | null;
  @Column('timestamptz', { nullable: true }) refresh_token_expires_at: Date | null;
  @Column('text', { nullable: true }) scope: string | null;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
