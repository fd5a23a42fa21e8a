import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('buckets')
export class Bucket {
  @PrimaryColumn('uuid') bucket_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/** An asset record; its bytes live in the blob store under a key derived from (bucket_id, name). */
@Entity('assets')
export class Asset {
  @PrimaryColumn('uuid') bucket_id: string;
  @PrimaryColumn('text') name: string;
  @Column('uuid') organization_id: string;
  /** Bytes stored; null until an upload completes. */
  @Column('bigint', { nullable: true, transformer: { to: (v) => v, from: (v) => (v === null ? null : Number(v)) } })
  size: number | null;
  /** What a data job knows of the item the asset came from (string values); a KB job copies it into chunk meta. */
  @Column('jsonb', { nullable: true }) meta: Record<string, string> | null;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
