import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('secrets')
export class Secret {
  @PrimaryColumn('uuid') secret_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  /** AES-256-GCM envelope (see src/security/secret-box.ts); never leaves the process in a response. */
  @Column('bytea') value_encrypted: Buffer;
  @Column('timestamptz', { nullable: true }) last_used: Date | null;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
