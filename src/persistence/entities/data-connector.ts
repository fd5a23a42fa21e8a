// Data connectors (a source of outside data feeding one bucket) and their jobs.
import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JobError, JobStatus } from './job-record';

const bigintNumber = { to: (v: number) => v, from: (v: string | null) => (v === null ? 0 : Number(v)) };

/** A transform: each fetched item is passed to the structure as a run (the item first, then `args`). */
export interface Transform {
  structure: { structure_id: string; args?: string[] };
}

@Entity('data_connectors')
export class DataConnector {
  @PrimaryColumn('uuid') data_connector_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  /** The interface's word: webscraper, data_lake, structure, objstore, drive, wiki. */
  @Column('text') type: string;
  /** `{<type>: {...}}` with secret fields sealed (`{sealed: base64}`): src/services/data-connectors/config.ts. */
  @Column('jsonb') config: Record<string, Record<string, unknown>>;
  /** The bucket the connector writes to, under the prefix `data-connectors/<data_connector_id>/`. */
  @Column('uuid') bucket_id: string;
  @Column('text', { nullable: true }) schedule_expression: string | null;
  @Column('jsonb') transforms: Transform[];
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

export type DataJobStatus = JobStatus;

@Entity('data_jobs')
export class DataJob {
  @PrimaryColumn('uuid') data_job_id: string;
  @Column('uuid') data_connector_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') status: DataJobStatus;
  @Column('jsonb', { nullable: true }) status_detail: Record<string, unknown> | null;
  @Column('jsonb') errors: JobError[];
  @Column('bigint', { transformer: bigintNumber }) bytes_ingested: number;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
  @Column('timestamptz', { nullable: true }) completed_at: Date | null;
  /** The Idempotency-Key of the request that made it (docs/run-control.md#idempotency-keys). */
  @Column('text', { nullable: true }) idempotency_key?: string | null;
}
