"""The structures dashboard's token gauge over a real griptape structure: the agent of projects/griptape/structure
runs with a prompt that makes the scripted model (compat.test.ts) report a chosen usage; griptape's prompt driver
publishes a FinishPromptEvent with those counts (input_token_count, output_token_count), its
GriptapeCloudEventListenerDriver posts it to the run, and GET /api/dashboards/structures counts it."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from griptape_cloud_client import models as m

from support import MODEL, call, client_for
from test_griptape_structure import run_agent

PROMPT_TOKENS, COMPLETION_TOKENS = 1234, 56


def test_token_gauge_counts_what_the_model_reported(agent_structure, griptape_project):
    client = client_for()
    rule = call("rules.create_rule", client, body=m.CreateRuleRequestContent(name="terse", rule="Be terse."))
    rules_alias, thread_alias = f"rules-{uuid.uuid4().hex}", f"thread-{uuid.uuid4().hex}"
    call("rulesets.create_ruleset", client, body=m.CreateRulesetRequestContent.from_dict({"name": "dashboard", "alias": rules_alias, "rule_ids": [rule.rule_id]}))

    done = run_agent(client, agent_structure.structure_id, f"report usage {PROMPT_TOKENS} {COMPLETION_TOKENS}", thread_alias, rules_alias)
    run = done["run"]
    # The agent saved its answer in the default bucket; test_griptape_structure lists that folder as its own.
    call("assets.delete_asset", client, griptape_project["organization"].default_bucket_id, f"answers/{run.structure_run_id}.txt")

    # What griptape itself posted: one model call, one FinishPromptEvent with the provider's counts.
    events = call("events.list_events", client, run.structure_run_id, limit="1000").events
    prompts = [e.payload for e in events if e.type_ == "FinishPromptEvent"]
    assert [(p["model"], p["input_token_count"], p["output_token_count"]) for p in prompts] == [
        (MODEL, PROMPT_TOKENS, COMPLETION_TOKENS)], prompts

    # The window starts at this run (its created_at, shown to the millisecond, less one: earlier runs of the agent
    # ended before it was created; pytest runs one test at a time, so no later one exists yet).
    dashboard = call("structures.get_structures_dashboard", client, start_time=run.created_at - timedelta(milliseconds=1),
                     end_time=datetime.now(timezone.utc) + timedelta(minutes=1), structure_ids=agent_structure.structure_id)
    assert dashboard.run_count_gauge.total_count == 1
    gauge = dashboard.token_count_gauge
    assert (gauge.input_, gauge.output) == (PROMPT_TOKENS, COMPLETION_TOKENS), gauge.to_dict()
    assert gauge.by_model.to_dict() == {MODEL: {"input": PROMPT_TOKENS, "output": COMPLETION_TOKENS}}
