import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('organizations')
export class Organization {
  @PrimaryColumn('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text', { default: 'FREE' }) entitlement: string;
  /** Created with the organization; used where a bucket is needed and none is named. */
  @Column('uuid') default_bucket_id: string;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
