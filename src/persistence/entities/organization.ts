import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('organizations')
export class Organization {
  @PrimaryColumn('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text', { default: 'FREE' }) entitlement: string;
  /** Created with the organization; used where a bucket is needed and none is named. */
  @Column('uuid') default_bucket_id: string;
  /** Its user code runs in group SANDBOX_GID_BASE + this (an identity column: the database numbers it). */
  @Column({ type: 'integer', insert: false, update: false }) sandbox_index: number;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
