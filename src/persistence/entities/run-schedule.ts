// Schedules of structures, functions and assistants: the api's record of a Temporal Schedule (run-schedule-<uuid>).
import { Column, Entity, PrimaryColumn } from 'typeorm';

export const SCHEDULE_TARGETS = ['structure', 'function', 'assistant'] as const;
export type ScheduleTarget = (typeof SCHEDULE_TARGETS)[number];

export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'allow_all', 'cancel_other'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

@Entity('run_schedules')
export class RunSchedule {
  @PrimaryColumn('uuid') schedule_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') resource_kind: ScheduleTarget;
  @Column('uuid') resource_id: string;
  @Column('text') schedule_expression: string;
  @Column('text') time_zone: string;
  @Column('jsonb') args: string[];
  /** A function run's event body, an assistant run's input; null for structures. */
  @Column('jsonb', { nullable: true }) input: unknown;
  @Column('boolean') enabled: boolean;
  @Column('text') overlap_policy: OverlapPolicy;
  @Column('integer') catchup_window_seconds: number;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
