import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Role } from './user';

@Entity('api_keys')
export class ApiKey {
  @PrimaryColumn('uuid') api_key_id: string;
  @Column('uuid') organization_id: string;
  /** The user the key acts as; null for organization keys. */
  @Column('uuid', { nullable: true }) user_id: string | null;
  @Column('text') name: string;
  /** SHA-256 of the key. Keys are 256-bit random, so a fast hash is enough; the value itself is never stored. */
  @Column('bytea') key_hash: Buffer;
  /** Set for the credential of one run (GT_CLOUD_API_KEY in user code): it may act on that run only. */
  @Column('uuid', { nullable: true }) run_id: string | null;
  /** An organization key's role; null for user keys (they act with their user's) and run credentials. */
  @Column('text', { nullable: true }) role: Role | null;
  @Column('boolean', { default: true }) active: boolean;
  @Column('timestamptz') last_used: Date;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
