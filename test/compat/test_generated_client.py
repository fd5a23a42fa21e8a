"""The generated client (griptape-cloud-client 0.2.0) against the stack: every operation it has for a resource
we serve is called through its own request builder and must answer a 2xx that its models parse strictly.

The table at the bottom accounts for every module of griptape_cloud_client.api: exercised by a scenario, not
served (no such resource here yet), or a known defect of the client itself (checked to still fail the same way).
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import uuid

import griptape_cloud_client.api as api_package
import httpx
import pytest
from griptape_cloud_client import models as m

from support import API_KEY, COVERED, MODEL, call, client_for, raw, strict_events, wait_until, zip_project

OTHER_KEY = os.environ["TARMAC_OTHER_API_KEY"]  # a user of another organization, invited below
OTHER_EMAIL = os.environ["TARMAC_OTHER_EMAIL"]
#: Records the scenarios leave for later tests (a finished structure run).
LEFT = {}


@pytest.fixture(scope="module")
def client():
    return client_for()


@pytest.fixture(scope="module")
def me(client):
    users = call("default.list_users", client).users
    organizations = call("organizations.list_organizations", client).organizations
    return {"user_id": users[0].user_id, "organization_id": organizations[0].organization_id}


@pytest.fixture(scope="module")
def plain_code(client):
    """The dependency-free project (projects/plain) uploaded to a new bucket: the data_lake code of the resources below."""
    bucket = call("buckets.create_bucket", client, body=m.CreateBucketRequestContent(name="code"))
    url = call("assets.create_asset_url", client, bucket.bucket_id, "plain.zip",
               body=m.CreateAssetUrlRequestContent.from_dict({"operation": "PUT"}))
    assert httpx.put(url.url, content=zip_project("plain"), headers=url.headers.to_dict()).status_code == 200
    return {"data_lake": {"bucket_id": bucket.bucket_id, "asset_path": "plain.zip"}}


def deployed(client, deployment_id: str):
    return wait_until(f"deployment {deployment_id}", lambda: (
        d := call("deployments.get_deployment", client, deployment_id)).status.value in ("SUCCEEDED", "FAILED", "ERROR") and d)


def ended(client, op: str, run_id: str):
    return wait_until(f"run {run_id}", lambda: (
        r := call(op, client, run_id)).status.value in ("SUCCEEDED", "FAILED", "ERROR", "CANCELLED") and r)


# ---- Scenarios: each calls every operation of one resource area ----


def accounts(client, me, **_):
    call("default.list_users", client)
    call("users.get_user", client, me["user_id"])
    call("api_keys.list_api_keys", client, me["user_id"])
    key = call("api_keys.create_api_key", client, me["user_id"], body=m.CreateApiKeyRequestContent(name="compat"))
    assert key.value
    call("api_keys.get_api_key", client, key.api_key_id)
    call("api_keys.update_api_key", client, key.api_key_id, body=m.UpdateApiKeyRequestContent(name="renamed"))
    call("api_keys.list_organization_api_keys", client, me["organization_id"])
    org_key = call("api_keys.create_organization_api_key", client, me["organization_id"], body=m.CreateOrganizationApiKeyRequestContent(name="org"))
    for k in (key, org_key):
        call("api_keys.delete_api_key", client, k.api_key_id)
    org = call("organizations.get_organization", client, me["organization_id"])
    assert org.default_bucket_id
    call("buckets.get_bucket", client, org.default_bucket_id)
    call("organizations.list_organization_users", client, me["organization_id"])


def config(client, **_):
    answer = call("configs.get_config", client)
    # Both words for the same values: the client's (provider) keys and the interface's neutral ones.
    assert answer.data_lake_s3_bucket == answer.additional_properties["data_lake_objstore_bucket"]
    assert answer.google_drive_data_connector_client_id == answer.additional_properties["drive_data_connector_client_id"]


def secrets(client, **_):
    secret = call("secrets.create_secret", client, body=m.CreateSecretRequestContent(name="compat-secret", value="v"))
    call("secrets.get_secret", client, secret.secret_id)
    call("secrets.list_secrets", client)
    call("secrets.update_secret", client, secret.secret_id, body=m.UpdateSecretRequestContent(name="renamed"))
    call("secrets.delete_secret", client, secret.secret_id)


def buckets(client, **_):
    bucket = call("buckets.create_bucket", client, body=m.CreateBucketRequestContent(name="compat"))
    call("buckets.get_bucket", client, bucket.bucket_id)
    call("buckets.list_buckets", client)
    call("buckets.update_bucket", client, bucket.bucket_id, body=m.UpdateBucketRequestContent(name="renamed"))
    call("assets.create_asset", client, bucket.bucket_id, body=m.CreateAssetRequestContent(name="dir/a.txt"))
    url = call("assets.create_asset_url", client, bucket.bucket_id, "dir/a.txt", body=m.CreateAssetUrlRequestContent())
    assert httpx.put(url.url, content=b"hello").status_code == 200
    assert call("assets.get_asset", client, bucket.bucket_id, "dir/a.txt").size == 5
    assert [a.name for a in call("assets.list_assets", client, bucket.bucket_id, prefix="dir/").assets] == ["dir/a.txt"]
    call("assets.delete_asset", client, bucket.bucket_id, "dir/a.txt")
    call("buckets.delete_bucket", client, bucket.bucket_id)


def invites(client, me, **_):
    other = client_for(OTHER_KEY)
    invite = call("invites.create_invite", client, me["organization_id"], body=m.CreateInviteRequestContent(email=OTHER_EMAIL))
    call("invites.list_invites", client, me["organization_id"])
    mine = call("invites.list_user_invites", other).invites
    assert [i.invite_id for i in mine] == [invite.invite_id]
    assert call("invites.get_invite", other, invite.invite_id).organization_name == invite.organization_name
    call("invites.respond_to_invite", other, invite.invite_id, body=m.RespondToInviteRequestContent.from_dict({"response": "REJECTED"}))
    withdrawn = call("invites.create_invite", client, me["organization_id"], body=m.CreateInviteRequestContent(email=f"nobody-{uuid.uuid4().hex}@example.test"))
    call("invites.delete_invite", client, withdrawn.invite_id)
    # Invited again, the other user joins; then a member removes them.
    joined = call("invites.create_invite", client, me["organization_id"], body=m.CreateInviteRequestContent(email=OTHER_EMAIL))
    call("invites.respond_to_invite", other, joined.invite_id, body=m.RespondToInviteRequestContent.from_dict({"response": "ACCEPTED"}))
    members = call("organizations.list_organization_users", client, me["organization_id"]).users
    newcomer = next(u for u in members if u.email.lower() == OTHER_EMAIL.lower())
    call("organizations.delete_organization_user", client, me["organization_id"], newcomer.user_id)
    assert newcomer.user_id not in [u.user_id for u in call("organizations.list_organization_users", client, me["organization_id"]).users]


def models_and_usage(client, **_):
    models = call("models.list_models", client).models
    assert [(x.model_type.value, x.default) for x in models] == [("chat", True), ("embedding", True)]
    assert call("models.get_model", client, models[0].model_config_id).model_name == models[0].model_name
    usage = call("usage.get_usage", client)
    assert usage.runtime_seconds >= 0 and usage.runtime_seconds_limit == -1


def rules(client, **_):
    rule = call("rules.create_rule", client, body=m.CreateRuleRequestContent(name="r", rule="Be brief."))
    call("rules.get_rule", client, rule.rule_id)
    call("rules.update_rule", client, rule.rule_id, body=m.UpdateRuleRequestContent(rule="Be very brief."))
    alias = f"compat-{uuid.uuid4().hex}"
    ruleset = call("rulesets.create_ruleset", client, body=m.CreateRulesetRequestContent.from_dict({"name": "rs", "alias": alias, "rule_ids": [rule.rule_id]}))
    call("rulesets.get_ruleset", client, ruleset.ruleset_id)
    call("rulesets.delete_ruleset", client, call("rulesets.create_ruleset", client, body=m.CreateRulesetRequestContent(name="no alias")).ruleset_id)
    assert [r.ruleset_id for r in call("rulesets.list_rulesets", client, alias=alias).rulesets] == [ruleset.ruleset_id]
    call("rulesets.update_ruleset", client, ruleset.ruleset_id, body=m.UpdateRulesetRequestContent(description="d"))
    assert [r.rule_id for r in call("rules.list_rules", client, ruleset_id=ruleset.ruleset_id).rules] == [rule.rule_id]
    call("rulesets.delete_ruleset", client, ruleset.ruleset_id)
    call("rules.delete_rule", client, rule.rule_id)


def threads(client, **_):
    alias = f"compat-{uuid.uuid4().hex}"
    thread = call("threads.create_thread", client, body=m.CreateThreadRequestContent.from_dict(
        {"name": "t", "alias": alias, "messages": [{"input": "hi", "output": "hello"}]}))
    call("threads.get_thread", client, thread.thread_id)
    call("threads.list_threads", client, alias=alias)
    call("threads.update_thread", client, thread.thread_id, body=m.UpdateThreadRequestContent(metadata=m.Metadata.from_dict({"k": "v"})))
    call("threads.delete_thread", client, call("threads.create_thread", client, body=m.CreateThreadRequestContent(name="no alias")).thread_id)
    message = call("messages.create_message", client, thread.thread_id, body=m.CreateMessageRequestContent.from_dict({"input": "q", "output": "a"}))
    call("messages.get_message", client, message.message_id)
    assert len(call("messages.list_messages", client, thread.thread_id).messages) == 2
    call("messages.update_message", client, message.message_id, body=m.UpdateMessageRequestContent.from_dict({"output": "b"}))
    call("messages.delete_message", client, message.message_id)
    call("threads.delete_thread", client, thread.thread_id)


def structures(client, plain_code, **_):
    structure = call("structures.create_structure", client, body=m.CreateStructureRequestContent.from_dict({
        "name": "compat", "code": plain_code, "env_vars": [{"name": "X", "value": "1", "source": "manual"}]}))
    call("structures.get_structure", client, structure.structure_id)
    call("structures.list_structures", client)
    call("structures.update_structure", client, structure.structure_id, body=m.UpdateStructureRequestContent(webhook_enabled=True))
    call("deployments.list_structure_deployments", client, structure.structure_id)
    assert deployed(client, structure.latest_deployment_id).status.value == "SUCCEEDED"
    forced = call("deployments.create_structure_deployment", client, structure.structure_id, body=m.CreateStructureDeploymentRequestContent(force=True))
    assert deployed(client, forced.deployment_id).status.value == "SUCCEEDED"

    run = call("structure_runs.create_structure_run", client, structure.structure_id, body=m.CreateStructureRunRequestContent(args=["0", "hi"]))
    assert ended(client, "structure_runs.get_structure_run", run.structure_run_id).status.value == "SUCCEEDED"
    LEFT["structure_run_id"] = run.structure_run_id
    call("structure_runs.list_structure_runs", client, structure.structure_id, status=[m.StructureRunStatus.SUCCEEDED])
    assert "structure ran with" in " ".join(call("structure_runs.list_structure_run_logs", client, run.structure_run_id).logs)
    events = call("events.list_events", client, run.structure_run_id).events
    call("events.get_event", client, events[0].event_id)
    # Every data line of the stream is a full EventDetail of the run, to the last (the end is a comment line).
    stream = call("events.get_structure_run_events_sse", client, run.structure_run_id)
    streamed = strict_events(stream, m.EventDetail, "structure_run_id", run.structure_run_id)
    assert [e.event_id for e in streamed] == [e.event_id for e in call("events.list_events", client, run.structure_run_id).events]
    assert streamed[-1].type_ == "StructureRunCompleted" and stream.endswith(": end SUCCEEDED\n\n")

    long = call("structure_runs.create_structure_run", client, structure.structure_id, body=m.CreateStructureRunRequestContent(args=["60"]))
    call("events.create_events", client, long.structure_run_id, body=m.CreateEventsRequestContent.from_dict(
        {"events": [{"type": "UserEvent", "timestamp": 1.5, "payload": {"n": 1}}]}))
    assert call("structure_runs.cancel_structure_run", client, long.structure_run_id).status.value == "CANCELLED"

    for op in ("structures.invoke_structure_webhook_get", "structures.invoke_structure_webhook_post"):
        answer = call(op, client_for(None), structure.structure_id, api_key=API_KEY)
        assert answer.structure_id == structure.structure_id
        ended(client, "structure_runs.get_structure_run", answer.additional_properties["structure_run_id"])
    call("structures.get_structures_dashboard", client, structure_ids=structure.structure_id)

    # The client names the code host `github` (the interface: `codehost`): accepted, and answered with both words.
    hosted = call("structures.create_structure", client, body=m.CreateStructureRequestContent.from_dict({
        "name": "hosted", "code": {"github": {"owner": "acme", "name": "agents", "push": {"branch": "main"}}}}))
    assert hosted.code.github.owner == "acme" and hosted.code.additional_properties["codehost"]["owner"] == "acme"
    call("deployments.get_deployment", client, hosted.latest_deployment_id)
    call("structures.delete_structure", client, hosted.structure_id)


def functions(client, plain_code, **_):
    function = call("functions.create_function", client, body=m.CreateFunctionRequestContent.from_dict({"name": "compat", "code": plain_code}))
    call("functions.get_function", client, function.function_id)
    call("functions.list_functions", client)
    call("functions.update_function", client, function.function_id, body=m.UpdateFunctionRequestContent(description="d"))
    call("deployments.list_function_deployments", client, function.function_id)
    assert deployed(client, function.latest_deployment_id).status.value == "SUCCEEDED"
    forced = call("deployments.create_function_deployment", client, function.function_id, body=m.CreateFunctionDeploymentRequestContent(force=True))
    assert deployed(client, forced.deployment_id).status.value == "SUCCEEDED"
    assert call("function_execute.create_function_execution_post", client, function.function_id, body={"a": 1}) == {"echo": {"body": {"a": 1}, "query_params": {}}}
    assert call("function_execute.create_function_execution_get", client, function.function_id)["echo"]["body"] is None
    runs = call("function_runs.list_function_runs", client, function.function_id).function_runs
    call("function_runs.get_function_run", client, runs[0].function_run_id)
    call("function_runs.list_function_run_logs", client, runs[0].function_run_id)
    call("functions.delete_function", client, function.function_id)


def tools(client, plain_code, **_):
    tool = call("tools.create_tool", client, body=m.CreateToolRequestContent.from_dict({"name": "compat", "code": plain_code}))
    call("tools.get_tool", client, tool.tool_id)
    call("tools.list_tools", client)
    call("tools.update_tool", client, tool.tool_id, body=m.UpdateToolRequestContent(description="d"))
    call("deployments.list_tool_deployments", client, tool.tool_id)
    assert deployed(client, tool.latest_deployment_id).status.value == "SUCCEEDED"
    forced = call("deployments.create_tool_deployment", client, tool.tool_id, body=m.CreateToolDeploymentRequestContent(force=True))
    assert deployed(client, forced.deployment_id).status.value == "SUCCEEDED"
    assert "/activities/echo" in call("tool_invoke.get_tool_open_api_run", client, tool.tool_id)["paths"]
    assert call("tool_invoke.create_tool_activity_run", client, tool.tool_id, "echo", body={"x": 1}) == {"type": "TextArtifact", "value": "{'x': 1}"}
    runs = call("tool_runs.list_tool_runs", client, tool.tool_id).tool_runs
    call("tool_runs.get_tool_run", client, runs[0].tool_run_id)
    call("tool_runs.list_tool_run_logs", client, runs[0].tool_run_id)
    call("tools.delete_tool", client, tool.tool_id)


def assistants(client, **_):
    assistant = call("assistants.create_assistant", client, body=m.CreateAssistantRequestContent(name="compat"))
    call("assistants.get_assistant", client, assistant.assistant_id)
    call("assistants.list_assistants", client)
    call("assistants.update_assistant", client, assistant.assistant_id, body=m.UpdateAssistantRequestContent(description="d"))
    run = call("assistant_runs.create_assistant_run", client, assistant.assistant_id, body=m.CreateAssistantRunRequestContent(
        input_="hello", model=MODEL, new_thread=True))
    assert ended(client, "assistant_runs.get_assistant_run", run.assistant_run_id).status.value == "SUCCEEDED"
    call("assistant_runs.list_assistant_runs", client, assistant.assistant_id)
    call("events.list_assistant_events", client, run.assistant_run_id)
    stream = call("events.get_assistant_run_events_sse", client, run.assistant_run_id)
    streamed = strict_events(stream, m.AssistantEventDetail, "assistant_run_id", run.assistant_run_id)
    assert "FinishStructureRunEvent" in [e.type_ for e in streamed] and streamed[-1].type_ == "StructureRunCompleted"
    assert stream.endswith(": end SUCCEEDED\n\n")
    # The scripted model never answers "stall" (compat.test.ts): the run stays open until cancelled.
    stalled = call("assistant_runs.create_assistant_run", client, assistant.assistant_id, body=m.CreateAssistantRunRequestContent(input_="stall", model=MODEL))
    wait_until("the stalled run to run", lambda: call("assistant_runs.get_assistant_run", client, stalled.assistant_run_id).status.value == "RUNNING")
    assert call("assistant_runs.cancel_assistant_run", client, stalled.assistant_run_id).status.value == "CANCELLED"
    call("assistants.delete_assistant", client, assistant.assistant_id)


def knowledge_bases(client, **_):
    bucket = call("buckets.create_bucket", client, body=m.CreateBucketRequestContent(name="kb"))
    call("assets.create_asset", client, bucket.bucket_id, body=m.CreateAssetRequestContent(name="docs/a.txt"))
    url = call("assets.create_asset_url", client, bucket.bucket_id, "docs/a.txt", body=m.CreateAssetUrlRequestContent())
    assert httpx.put(url.url, content=b"Tarmac stores knowledge in PostgreSQL.").status_code == 200
    kb = call("knowledge_bases.create_knowledge_base", client, body=m.CreateKnowledgeBaseRequestContent.from_dict({
        "name": "compat", "type": "gtc_hybrid_sql_pg_vector", "asset_paths": [f"{bucket.bucket_id}/docs/"],
        "config": {"gtc_hybrid_sql_pg_vector": {"structured_columns": [], "unstructured_columns": []}}}))
    call("knowledge_bases.get_knowledge_base", client, kb.knowledge_base_id)
    call("knowledge_bases.list_knowledge_bases", client)
    call("knowledge_bases.update_knowledge_base", client, kb.knowledge_base_id, body=m.UpdateKnowledgeBaseRequestContent.from_dict({
        "name": "renamed", "type": "gtc_hybrid_sql_pg_vector",
        "config": {"gtc_hybrid_sql_pg_vector": {"structured_columns": [], "unstructured_columns": []}}}))
    job = call("knowledge_base_jobs.create_knowledge_base_job", client, kb.knowledge_base_id)
    done = wait_until(f"job {job.knowledge_base_job_id}", lambda: (
        j := call("knowledge_base_jobs.get_knowledge_base_job", client, job.knowledge_base_job_id)).status.value in ("SUCCEEDED", "FAILED", "CANCELLED") and j)
    assert done.status.value == "SUCCEEDED", done.to_dict()
    call("knowledge_base_jobs.list_knowledge_base_jobs", client, kb.knowledge_base_id)
    answer = call("knowledge_bases.query_knowledge_base", client, kb.knowledge_base_id,
                  body=m.QueryKnowledgeBaseRequestContent.from_dict({"query": "PostgreSQL knowledge", "query_args": {"count": 2}}))
    assert answer.entries[0].meta.additional_properties["asset_name"] == "docs/a.txt"
    call("knowledge_bases.get_knowledge_base_query", client, answer.knowledge_base_query_id)
    call("knowledge_bases.list_knowledge_base_queries", client, kb.knowledge_base_id)
    # Search: the default model (scripted in compat.test.ts to echo its input) answers from the retrieved passages.
    found = call("knowledge_bases.search_knowledge_base", client, kb.knowledge_base_id,
                 body=m.SearchKnowledgeBaseRequestContent.from_dict({"query": "PostgreSQL knowledge"}))
    assert "Tarmac stores knowledge in PostgreSQL." in json.loads(found.result)["input"]
    call("knowledge_bases.get_knowledge_base_search", client, found.knowledge_base_search_id)
    call("knowledge_bases.list_knowledge_base_searches", client, kb.knowledge_base_id)
    # Retrievers: one component inline, one standalone (/retriever-components) named by id.
    component = call("retriever_components.create_retriever_component", client, body=m.CreateRetrieverComponentRequestContent(
        name="rerank", type_="model_rerank", config={"model": MODEL, "count": 1}))
    call("retriever_components.get_retriever_component", client, component.retriever_component_id)
    assert call("retriever_components.list_retriever_components", client).retriever_components[0].name == "rerank"
    component = call("retriever_components.update_retriever_component", client, component.retriever_component_id,
                     body=m.UpdateRetrieverComponentRequestContent(type_="model_rerank", config={"count": 1}, description="keeps one"))
    assert component.description == "keeps one" and component.config == {"count": 1}
    retriever = call("retrievers.create_retriever", client, body=m.CreateRetrieverRequestContent.from_dict({
        "name": "compat", "retriever_components": [
            {"name": "kb", "type": "knowledge_base", "config": {"knowledge_base_id": kb.knowledge_base_id}}]}))
    assert retriever.retriever_components[0].type_ == "knowledge_base"
    # The client's update body always carries retriever_components (which replace the inline ones): give them again.
    with_component = call("retrievers.update_retriever", client, retriever.retriever_id, body=m.UpdateRetrieverRequestContent.from_dict(
        {"retriever_components": [{"name": "kb", "type": "knowledge_base", "config": {"knowledge_base_id": kb.knowledge_base_id}}],
         "retriever_component_ids": [component.retriever_component_id]}))
    assert [c.name for c in with_component.retriever_components] == ["kb", "rerank"]
    assert raw("DELETE", f"/api/retriever-components/{component.retriever_component_id}").status_code == 409
    # (from_dict makes a missing list an empty one, so the inline components go with every update body.)
    call("retrievers.update_retriever", client, retriever.retriever_id, body=m.UpdateRetrieverRequestContent.from_dict(
        {"retriever_components": [{"name": "kb", "type": "knowledge_base", "config": {"knowledge_base_id": kb.knowledge_base_id}}],
         "retriever_component_ids": []}))
    call("retriever_components.delete_retriever_component", client, component.retriever_component_id)
    call("retrievers.get_retriever", client, retriever.retriever_id)
    call("retrievers.list_retrievers", client)
    call("retrievers.update_retriever", client, retriever.retriever_id, body=m.UpdateRetrieverRequestContent(name="renamed"))
    outputs = call("retrievers.query_retriever", client, retriever.retriever_id, body=m.QueryRetrieverRequestContent.from_dict(
        {"query": "PostgreSQL knowledge", "retriever_components_query_args": {"kb": {"count": 1}}})).outputs
    assert [o["meta"]["asset_name"] for o in outputs] == ["docs/a.txt"]
    call("retrievers.delete_retriever", client, retriever.retriever_id)
    # A job whose embedding requests never get an answer (compat.test.ts) runs until cancelled.
    slow = call("knowledge_bases.create_knowledge_base", client, body=m.CreateKnowledgeBaseRequestContent.from_dict({
        "name": "slow", "type": "gtc_pg_vector", "asset_paths": [f"{bucket.bucket_id}/docs/a.txt"],
        "config": {"gtc_pg_vector": {"embedding_model": os.environ["TARMAC_STALL_EMBEDDING_MODEL"]}}}))
    stalled = call("knowledge_base_jobs.create_knowledge_base_job", client, slow.knowledge_base_id)
    wait_until("the stalled job to run", lambda: call("knowledge_base_jobs.get_knowledge_base_job", client, stalled.knowledge_base_job_id).status.value == "RUNNING")
    assert call("knowledge_base_jobs.cancel_knowledge_base_job", client, stalled.knowledge_base_job_id).status.value == "CANCELLED"
    call("knowledge_bases.delete_knowledge_base", client, slow.knowledge_base_id)
    call("knowledge_bases.delete_knowledge_base", client, kb.knowledge_base_id)


def integrations(client, **_):
    # The client's IntegrationType knows `slack`, `github_app` and `webhook`; this platform answers the interface's
    # words (`chatapp`, `codehost_app`), so the scenario works with a webhook, the type both share.
    assistant = call("assistants.create_assistant", client, body=m.CreateAssistantRequestContent(name="hooked"))
    created = call("integrations.create_integration", client, body=m.CreateIntegrationRequestContent.from_dict({
        "name": "compat", "type": "webhook", "config": {"webhook": {"disable_api_key_param": False}},
        "assistant_ids": [assistant.assistant_id]}))
    endpoint = created.config.webhook.integration_endpoint
    assert endpoint.endswith(f"/api/integrations/{created.integration_id}/handler")
    call("integrations.get_integration", client, created.integration_id)
    call("integrations.list_integrations", client)
    updated = call("integrations.update_integration", client, created.integration_id,
                   body=m.UpdateIntegrationRequestContent.from_dict({"name": "renamed", "assistant_ids": []}))
    assert updated.name == "renamed" and updated.assistant_ids == []
    # The endpoint as the nodes library calls it: `?api_key=` appended.
    hit = httpx.post(f"{endpoint}?api_key={API_KEY}", json={"hello": "world"})
    assert hit.status_code == 200 and hit.json()["verdict"] == "accepted", hit.text
    call("integrations.delete_integration", client, created.integration_id)
    call("assistants.delete_assistant", client, assistant.assistant_id)


def data_connectors(client, **_):
    import http.server
    import threading

    bucket = call("buckets.create_bucket", client, body=m.CreateBucketRequestContent(name="lake source"))
    call("assets.create_asset", client, bucket.bucket_id, body=m.CreateAssetRequestContent(name="docs/a.txt"))
    url = call("assets.create_asset_url", client, bucket.bucket_id, "docs/a.txt", body=m.CreateAssetUrlRequestContent())
    assert httpx.put(url.url, content=b"copied by a data connector").status_code == 200
    connector = call("data_connectors.create_data_connector", client, body=m.CreateDataConnectorRequestContent.from_dict({
        "name": "compat lake", "type": "data_lake",
        "config": {"data_lake": {"bucket_id": bucket.bucket_id, "asset_paths": ["docs/"]}}}))
    ended = lambda job_id: (j := call("data_jobs.get_data_job", client, job_id)).status.value in ("SUCCEEDED", "FAILED", "CANCELLED") and j
    first = wait_until(f"data job {connector.data_job_id}", lambda: ended(connector.data_job_id))
    assert first.status.value == "SUCCEEDED", first.to_dict()
    call("data_connectors.get_data_connector", client, connector.data_connector_id)
    call("data_connectors.list_data_connectors", client)
    call("data_connectors.update_data_connector", client, connector.data_connector_id,
         body=m.UpdateDataConnectorRequestContent.from_dict({"name": "renamed", "schedule_expression": "rate(1 day)"}))
    job = call("data_jobs.create_data_job", client, connector.data_connector_id)
    assert wait_until(f"data job {job.data_job_id}", lambda: ended(job.data_job_id)).status.value == "SUCCEEDED"
    call("data_jobs.list_data_jobs", client, connector.data_connector_id)

    # A webscraper whose page never answers (a local server of this test on 127.0.0.2, the one loopback address the
    # stack's OUTBOUND_ALLOW opens for outside doubles) runs until cancelled.
    class Hang(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the handler's name
            if self.path == "/robots.txt":
                self.send_response(404)
                self.end_headers()
                return
            threading.Event().wait(60)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), Hang)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        scraper = call("data_connectors.create_data_connector", client, body=m.CreateDataConnectorRequestContent.from_dict({
            "name": "compat scraper", "type": "webscraper",
            "config": {"webscraper": {"urls": [f"http://127.0.0.2:{server.server_address[1]}/page"]}}}))
        wait_until("the scraper job to run", lambda: call("data_jobs.get_data_job", client, scraper.data_job_id).status.value == "RUNNING")
        assert call("data_jobs.cancel_data_job", client, scraper.data_job_id).status.value == "CANCELLED"
        call("data_connectors.delete_data_connector", client, scraper.data_connector_id)
    finally:
        server.shutdown()
    call("data_connectors.delete_data_connector", client, connector.data_connector_id)


class _Body:
    """A request body given as the dict to send (for models of the client that cannot build a valid one)."""

    def __init__(self, body: dict):
        self.body = body

    def to_dict(self) -> dict:
        return self.body


def chat(client, **_):
    # The client's JsonSchema model cannot carry `additionalProperties` (it collides with its own attribute of that
    # name), so its CreateChatMessageRequestContent cannot be built; the body is sent as the dict it should produce.
    body = _Body({
        "driver_configuration": {"model": MODEL}, "tools": [],
        "output_schema": {"additionalProperties": False, "description": "", "id": "", "properties": {}, "required": [], "schema": "", "title": "Out", "type": "object"},
        "messages": [{"role": "user", "usage": {"type": "Usage", "input_tokens": 0, "output_tokens": 0},
                      "content": [{"type": "TextMessageContent", "artifact": {"type": "TextArtifact", "id": uuid.uuid4().hex, "name": "q", "value": "hello"}}]}],
    })
    answer = call("chat_messages.create_chat_message", client, body=body)
    assert json.loads(answer.content[0].artifact.value)["input"] == "hello"


def connections(client, **_):
    # The client's words: type `github`, credentials `{github: {auth_code}}` (stored and answered as `codehost`).
    body = m.CreateConnectionRequestContent.from_dict(
        {"type": "github", "name": "compat", "credentials": {"github": {"auth_code": os.environ["TARMAC_CODEHOST_AUTH_CODE"]}}})
    connection = call("connections.create_connection", client, body=body)
    assert connection.type_ == "codehost"
    listed = call("connections.list_connections", client, type_="github")
    assert [c.connection_id for c in listed.connections] == [connection.connection_id]
    assert call("connections.get_token", client, connection.connection_id).access_token.startswith("gho_")
    call("connections.delete_connection", client, connection.connection_id)


def billing(client, **_):
    # Through the stack's local payment provider (test/harness/stripe-double.ts), as BILLING_* configures it.
    body = m.CreateCheckoutSessionRequestContent(price_lookup_key=os.environ["TARMAC_PRICE_LOOKUP_KEY"])
    assert "/c/pay/cs_test_" in call("billing.create_checkout_session", client, body=body).redirect_url
    assert "/p/session/bps_" in call("billing.create_billing_management_url", client).billing_management_url


SCENARIOS = [accounts, config, secrets, buckets, invites, models_and_usage, rules, threads, structures, functions, tools, assistants, chat,
             knowledge_bases, connections, billing, integrations, data_connectors]

#: Client packages whose resources this platform does not serve (yet); their calls answer 404.
NOT_SERVED = {
    "credits_": "credits",
    "entitlement_policies": "entitlement policies",
    "export_jobs": "export jobs", "import_jobs": "import jobs",
    "libraries": "libraries",
    "license_groups": "license groups", "licenses": "licenses",
    "models.create_model": "models are configured by the operator (405)", "models.update_model": "models are configured by the operator (405)",
    "models.delete_model": "models are configured by the operator (405)", "models.create_auth_config": "auth configs",
    "models.get_auth_config": "auth configs", "models.list_auth_configs": "auth configs", "models.update_auth_config": "auth configs",
    "models.delete_auth_config": "auth configs", "usage.create_nodes_usage": "hosted node usage reports",
    "session_pool": "sessions",
    "sessions": "sessions",
    "organizations.create_organization": "organizations are created by operators (npm run admin)",
    "organizations.update_organization": "organizations are changed by operators",
    "organizations.delete_organization": "organizations are deleted by operators",
}


def _all_operations() -> set[str]:
    return {f"{pkg.name}.{mod.name}"
            for pkg in pkgutil.iter_modules(api_package.__path__)
            for mod in pkgutil.iter_modules([os.path.join(api_package.__path__[0], pkg.name)])}


def defect_chat_stream(client):
    """The client parses the stream's body as one JSON document; the service streams Server-Sent Events, which is
    what griptape's GriptapeCloudPromptDriver reads (and what this platform serves). Answers the raw response."""
    response = raw("POST", "/api/chat/messages/stream", json={
        "driver_configuration": {"model": MODEL}, "tools": [],
        "messages": [{"type": "Message", "role": "user", "usage": {"type": "Usage", "input_tokens": None, "output_tokens": None},
                      "content": [{"type": "TextMessageContent", "artifact": {"type": "TextArtifact", "value": "hi"}}]}]})
    assert response.status_code == 201 and response.headers["content-type"].startswith("text/event-stream")
    assert "\ndata: {" in response.text
    return response


def defect_list_spans(client):
    """The client's SpanDetail declares `events` as one ObservabilityEvent; the observability driver posts a list
    of them, which is what a span has and what this platform answers."""
    run_id = LEFT["structure_run_id"]
    span = {"trace_id": "t", "span_id": "s", "name": "n", "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:01Z",
            "status": "OK", "attributes": {}, "events": [{"name": "e", "timestamp": "2026-01-01T00:00:00Z", "attributes": {}}]}
    assert raw("POST", f"/api/structure-runs/{run_id}/spans", json=[span]).status_code == 200
    response = raw("GET", f"/api/structure-runs/{run_id}/spans")
    assert response.status_code == 200 and response.json()["spans"][-1]["events"] == span["events"]
    return response


#: Operations this platform serves whose answers the client cannot parse because of the client itself.
CLIENT_DEFECTS = {"chat_messages.create_chat_message_stream": defect_chat_stream, "spans.list_spans": defect_list_spans}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_operations_parse(scenario, client, me, plain_code):
    scenario(client=client, me=me, plain_code=plain_code)


@pytest.mark.parametrize("op", CLIENT_DEFECTS)
def test_known_client_defects_still_fail(op, client):
    """If one of these starts parsing, the client was fixed: move the operation into a scenario."""
    response = CLIENT_DEFECTS[op](client)
    module = importlib.import_module(f"griptape_cloud_client.api.{op}")
    with pytest.raises((KeyError, TypeError, ValueError)):
        module._build_response(client=client, response=response)


class _EmptyBody:
    def to_dict(self):
        return {}


@pytest.mark.parametrize("op", sorted(op for op in _all_operations() if op in NOT_SERVED or op.split(".")[0] in NOT_SERVED))
def test_not_served_operations_answer_404(op):
    """What the table calls not served really is not: the call answers 404 NotFoundError, or 405
    MethodNotAllowedError where the path serves other methods (POST /organizations, for instance)."""
    module = importlib.import_module(f"griptape_cloud_client.api.{op}")
    params = inspect.signature(module._get_kwargs).parameters
    args = [str(uuid.uuid4()) for p in params.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    kwargs = {"body": _EmptyBody()} if "body" in params else {}
    response = client_for().get_httpx_client().request(**module._get_kwargs(*args, **kwargs))
    expected = {404: "NotFoundError", 405: "MethodNotAllowedError"}
    if op == "sessions.allocate_session":
        # POST /api/sessions is a person's sign-in here (docs/people.md), not the hosted compute sessions: the
        # client's body is refused as a sign-in without email and password (docs/compatibility.md).
        expected = {400: "ValidationError"}
    assert expected.get(response.status_code) == response.json()["type"], f"{op}: {response.status_code} {response.text[:300]}"


def test_every_client_operation_is_accounted_for():
    """Runs last: every api module is exercised, not served, or a known defect, and nothing is in two places."""
    modules = _all_operations()
    not_served = {op for op in modules if op in NOT_SERVED or op.split(".")[0] in NOT_SERVED}
    defects = set(CLIENT_DEFECTS)
    assert COVERED | not_served | defects == modules, sorted(modules - COVERED - not_served - defects)
    assert not (COVERED & not_served) and not (COVERED & defects)
    print(f"\n{len(COVERED)} operations parse; {len(defects)} known client defects; {len(not_served)} not served")
