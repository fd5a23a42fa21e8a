import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Run control for assistants (docs/run-control.md): an assistant may declare `concurrency` and a `retry_policy`
 * and have its queue paused, like a structure, function or tool. An execution slot may be held in its parent's
 * slot (`in_parent_slot`: a structure or tool run an assistant run calls), counted against its resource's limits
 * but not against the organization's share, which its parent already holds.
 */
export class AssistantRunControl1765800000000 implements MigrationInterface {
  name = 'AssistantRunControl1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE assistants ADD COLUMN concurrency jsonb, ADD COLUMN queue_paused_at timestamptz,
         ADD COLUMN retry_policy jsonb`,
    );
    await q.query(`ALTER TABLE execution_slots ADD COLUMN in_parent_slot boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE execution_slots DROP COLUMN in_parent_slot`);
    await q.query(
      `ALTER TABLE assistants DROP COLUMN concurrency, DROP COLUMN queue_paused_at, DROP COLUMN retry_policy`,
    );
  }
}
