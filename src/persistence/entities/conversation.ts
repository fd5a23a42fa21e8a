import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One instruction for a model; rulesets group rules in order. */
@Entity('rules')
export class Rule {
  @PrimaryColumn('uuid') rule_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text') rule: string;
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

@Entity('rulesets')
export class Ruleset {
  @PrimaryColumn('uuid') ruleset_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text') description: string;
  /** Unique per organization when set. */
  @Column('text', { nullable: true }) alias: string | null;
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/** A ruleset's `rule_ids`, in order. */
@Entity('ruleset_rules')
export class RulesetRule {
  @PrimaryColumn('uuid') ruleset_id: string;
  @PrimaryColumn('uuid') rule_id: string;
  @Column('int') position: number;
}

/** A conversation: its messages are the exchanges so far. */
@Entity('threads')
export class Thread {
  @PrimaryColumn('uuid') thread_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  /** Unique per organization when set. */
  @Column('text', { nullable: true }) alias: string | null;
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/** One exchange of a thread (`input` → `output`) at position `index` (from 0). */
@Entity('thread_messages')
export class ThreadMessage {
  @PrimaryColumn('uuid') message_id: string;
  @Column('uuid') thread_id: string;
  @Column('uuid') organization_id: string;
  @Column('int') index: number;
  @Column('text') input: string;
  @Column('text') output: string;
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}
