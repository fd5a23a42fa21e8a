import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A successful deployment's build as an artifact in the blob store (src/runtime/build/local-builds.ts): its key,
 * the sha256 of its bytes (a worker that fetches it checks it) and its size. Expand only: null for deployments
 * built before, which keep running from build_path (a BUILD_DIR their workers share).
 */
export class BuildArtifacts1767000000000 implements MigrationInterface {
  name = 'BuildArtifacts1767000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE deployments ADD COLUMN build_artifact_key text, ADD COLUMN build_sha256 text, ADD COLUMN build_artifact_bytes bigint`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE deployments DROP COLUMN build_artifact_key, DROP COLUMN build_sha256, DROP COLUMN build_artifact_bytes`,
    );
  }
}
