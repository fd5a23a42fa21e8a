import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { CodeResourceKind } from './code-resource';

export const DEPLOYMENT_STATUSES = ['QUEUED', 'DEPLOYING', 'SUCCEEDED', 'FAILED', 'ERROR'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];
export const DEPLOYMENT_TERMINAL: DeploymentStatus[] = ['SUCCEEDED', 'FAILED', 'ERROR'];

@Entity('deployments')
export class Deployment {
  @PrimaryColumn('uuid') deployment_id: string;
  @Column('uuid') organization_id: string;
  @Column('uuid') resource_id: string;
  @Column('text') resource_kind: CodeResourceKind;
  @Column('text') status: DeploymentStatus;
  @Column('jsonb', { nullable: true }) status_detail: unknown;
  /** What was deployed: `{data_lake: {bucket_id, asset_path}}`, `{codehost: {commit_sha}}` or `{default: {}}`. */
  @Column('jsonb') code_source: Record<string, unknown>;
  /** Immutable build directory of a successful deployment. */
  @Column('text', { nullable: true }) build_path: string | null;
  /**
   * The build as an artifact in the blob store (migrations/1767000000000): its key, sha256 and size; null for
   * builds made before artifacts, which run from build_path only (a shared BUILD_DIR).
   */
  @Column('text', { nullable: true }) build_artifact_key?: string | null;
  @Column('text', { nullable: true }) build_sha256?: string | null;
  @Column('bigint', { nullable: true }) build_artifact_bytes?: string | null;
  /** Internal: what was deployed, comparable (migrations/1764000000000); a non-forced deploy reuses a match. */
  @Column('text', { nullable: true }) source_fingerprint: string | null;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
  @Column('timestamptz', { nullable: true }) completed_at: Date | null;
}
