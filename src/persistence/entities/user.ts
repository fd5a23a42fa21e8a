import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('users')
export class User {
  @PrimaryColumn('uuid') user_id: string;
  /** Stored lower-cased; unique. */
  @Column('text') email: string;
  @Column('text', { nullable: true }) name: string | null;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/** A user's membership of an organization. */
@Entity('memberships')
export class Membership {
  @PrimaryColumn('uuid') organization_id: string;
  @PrimaryColumn('uuid') user_id: string;
  @Column('timestamptz') created_at: Date;
}
