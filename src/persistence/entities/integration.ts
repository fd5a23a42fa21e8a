// Integrations and their delivery log (migrations/1764840000000-integrations.ts).
import { Column, Entity, PrimaryColumn } from 'typeorm';

export type IntegrationType = 'webhook' | 'chatapp' | 'codehost_app';
export const INTEGRATION_TYPES: IntegrationType[] = ['webhook', 'chatapp', 'codehost_app'];

/** What is stored of `config`: the request's member fields (no output-only fields, no secret values). */
export interface IntegrationSettings {
  disable_api_key_param?: boolean;
  app_name?: string;
  app_display_name?: string;
  app_description?: string;
  bot_token_secret_ref?: string;
  signing_secret_secret_ref?: string;
  app_id?: string;
  private_key_secret_ref?: string;
  webhook_secret_ref?: string;
}

@Entity('integrations')
export class Integration {
  @PrimaryColumn('uuid') integration_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text') description: string;
  @Column('text') type: IntegrationType;
  @Column('jsonb') config: IntegrationSettings;
  @Column('jsonb') structure_ids: string[];
  @Column('jsonb') assistant_ids: string[];
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/**
 * How the handler judged a hit: `accepted` (work started, or queued for the delivery workflow), `duplicate`
 * (its delivery id was seen: nothing started again), `ignored` (nothing to do: the app's own message, a
 * retry, an event type without work), `challenge` (the chat app's URL verification, answered), or a refusal.
 */
export const DELIVERY_VERDICTS = [
  'accepted',
  'duplicate',
  'ignored',
  'challenge',
  'bad_request',
  'bad_signature',
  'replayed',
  'unauthorized',
  'forbidden',
  'too_large',
  'rate_limited',
] as const;
export type DeliveryVerdict = (typeof DELIVERY_VERDICTS)[number];

/** Work of an accepted chatapp / codehost_app delivery (workflow integration-delivery-<uuid>). */
export const DELIVERY_STATUSES = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryError {
  type: string;
  message: string;
  /** The structure or assistant the error is about. */
  target?: string;
}

/** What the delivery workflow reads: the request as received (headers already stripped of credentials). */
export interface DeliveryPayload {
  raw_body: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
}

@Entity('integration_deliveries')
export class IntegrationDelivery {
  @PrimaryColumn('uuid') delivery_id: string;
  @Column('uuid') integration_id: string;
  @Column('uuid') organization_id: string;
  @Column('timestamptz') received_at: Date;
  @Column('text') verdict: DeliveryVerdict;
  @Column('integer') http_status: number;
  /** `message`, `push`, `url_verification`, ... (null for webhooks). */
  @Column('text', { nullable: true }) event: string | null;
  /** The sender's delivery id (event_id, X-GitHub-Delivery, Idempotency-Key) when it gave one. */
  @Column('text', { nullable: true }) delivery_key: string | null;
  /** = delivery_key on the first delivery with that id (unique per integration); null on the others. */
  @Column('text', { nullable: true }) dedupe_key: string | null;
  @Column('text', { nullable: true }) status: DeliveryStatus | null;
  @Column('jsonb', { nullable: true }) status_detail: Record<string, unknown> | null;
  @Column('jsonb') structure_run_ids: string[];
  @Column('jsonb') assistant_run_ids: string[];
  @Column('jsonb') deployment_ids: string[];
  @Column('jsonb') errors: DeliveryError[];
  /** Kept until the delivery's workflow ends. */
  @Column('jsonb', { nullable: true }) payload: DeliveryPayload | null;
  @Column('timestamptz') updated_at: Date;
  @Column('timestamptz', { nullable: true }) completed_at: Date | null;
}
