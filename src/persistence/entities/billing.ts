import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The payment provider's customer of an organization (one per organization, created by its first checkout). */
@Entity('billing_customers')
export class BillingCustomer {
  @PrimaryColumn('uuid') organization_id: string;
  @Column('text') customer_id: string;
  /** `created` of the billing event that last set the entitlement: older events arriving later change nothing. */
  @Column('timestamptz', { nullable: true }) entitlement_event_at: Date | null;
  @Column('timestamptz') created_at: Date;
}

/** A billing event already handled (its id is the provider's): a redelivery is answered without effect. */
@Entity('billing_events')
export class BillingEvent {
  @PrimaryColumn('text') event_id: string;
  @Column('uuid', { nullable: true }) organization_id: string | null;
  @Column('text') type: string;
  /** What it did: `entitlement:PAID`, `ignored: ...`. */
  @Column('text') verdict: string;
  @Column('timestamptz') received_at: Date;
}
