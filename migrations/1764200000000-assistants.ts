import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Assistants and what they use: rulesets and rules, threads and their messages, assistants, and
 * assistant runs. Assistant runs and chat message exchanges are rows of `runs` (kinds `assistant` and
 * `chat`), so they share the guarded transition, events, SSE fan-out, cancel and the reconciler with
 * structure runs. `runs.resource_id` stays the code resource (null for these kinds); an assistant run
 * names its assistant in `runs.assistant_id`, and its own fields live in `assistant_runs`.
 */
export class Assistants1764200000000 implements MigrationInterface {
  name = 'Assistants1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rules (
        rule_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        name text NOT NULL,
        rule text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX rules_org_idx ON rules (organization_id, created_at);

      CREATE TABLE rulesets (
        ruleset_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        alias text,
        metadata jsonb NOT NULL DEFAULT '{}',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX rulesets_org_idx ON rulesets (organization_id, created_at);
      CREATE UNIQUE INDEX rulesets_alias_idx ON rulesets (organization_id, alias) WHERE alias IS NOT NULL;

      -- A ruleset's rule_ids, in order. A rule may be in several rulesets.
      CREATE TABLE ruleset_rules (
        ruleset_id uuid NOT NULL REFERENCES rulesets ON DELETE CASCADE,
        rule_id uuid NOT NULL REFERENCES rules ON DELETE CASCADE,
        position int NOT NULL,
        PRIMARY KEY (ruleset_id, rule_id)
      );
      CREATE INDEX ruleset_rules_rule_idx ON ruleset_rules (rule_id);

      CREATE TABLE threads (
        thread_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        name text NOT NULL,
        alias text,
        metadata jsonb NOT NULL DEFAULT '{}',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX threads_org_idx ON threads (organization_id, created_at);
      CREATE UNIQUE INDEX threads_alias_idx ON threads (organization_id, alias) WHERE alias IS NOT NULL;

      -- One exchange of a thread (input, output), at position "index" from 0.
      CREATE TABLE thread_messages (
        message_id uuid PRIMARY KEY,
        thread_id uuid NOT NULL REFERENCES threads ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        index int NOT NULL,
        input text NOT NULL,
        output text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (thread_id, index) DEFERRABLE INITIALLY IMMEDIATE
      );

      CREATE TABLE assistants (
        assistant_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        input text,
        knowledge_base_ids jsonb NOT NULL DEFAULT '[]',
        retriever_ids jsonb NOT NULL DEFAULT '[]',
        ruleset_ids jsonb NOT NULL DEFAULT '[]',
        structure_ids jsonb NOT NULL DEFAULT '[]',
        tool_ids jsonb NOT NULL DEFAULT '[]',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX assistants_org_idx ON assistants (organization_id, created_at);

      ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
      ALTER TABLE runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('structure', 'function', 'tool', 'assistant', 'chat'));
      ALTER TABLE runs ALTER COLUMN resource_id DROP NOT NULL;
      ALTER TABLE runs ADD COLUMN assistant_id uuid REFERENCES assistants ON DELETE CASCADE;
      -- Model usage of assistant runs and chat exchanges: {input_tokens, output_tokens} and the model used.
      ALTER TABLE runs ADD COLUMN model text;
      ALTER TABLE runs ADD COLUMN usage jsonb;
      ALTER TABLE runs ADD CONSTRAINT runs_owner_check CHECK (
        CASE kind WHEN 'assistant' THEN assistant_id IS NOT NULL AND resource_id IS NULL
                  WHEN 'chat' THEN assistant_id IS NULL AND resource_id IS NULL
                  ELSE resource_id IS NOT NULL AND assistant_id IS NULL END);
      CREATE INDEX runs_assistant_idx ON runs (assistant_id, created_at) WHERE assistant_id IS NOT NULL;

      CREATE TABLE assistant_runs (
        run_id uuid PRIMARY KEY REFERENCES runs ON DELETE CASCADE,
        thread_id uuid REFERENCES threads ON DELETE SET NULL,
        stream boolean NOT NULL DEFAULT false,
        knowledge_base_ids jsonb NOT NULL DEFAULT '[]',
        retriever_ids jsonb NOT NULL DEFAULT '[]',
        ruleset_ids jsonb NOT NULL DEFAULT '[]',
        structure_ids jsonb NOT NULL DEFAULT '[]',
        tool_ids jsonb NOT NULL DEFAULT '[]',
        -- The model conversation after the prompt: assistant tool-call turns and their results, appended
        -- by activities step by step (never through workflow history).
        transcript jsonb NOT NULL DEFAULT '[]',
        -- The functions offered to the model, resolved once when the run starts: [{name, description,
        -- parameters, target: {kind: 'structure' | 'tool', id, activity?}}].
        tool_definitions jsonb
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE assistant_runs;
      DELETE FROM runs WHERE kind IN ('assistant', 'chat');
      ALTER TABLE runs DROP CONSTRAINT runs_owner_check;
      ALTER TABLE runs DROP COLUMN usage, DROP COLUMN model, DROP COLUMN assistant_id;
      ALTER TABLE runs ALTER COLUMN resource_id SET NOT NULL;
      ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
      ALTER TABLE runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('structure', 'function', 'tool'));
      DROP TABLE assistants, thread_messages, threads, ruleset_rules, rulesets, rules;
    `);
  }
}
