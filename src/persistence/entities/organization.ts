import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('organizations')
export class Organization {
  @PrimaryColumn('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text', { default: 'FREE' }) entitlement: string;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
