"""griptape's Griptape Cloud drivers, unmodified, inside a deployed structure (projects/griptape/structure): an Agent
with the event listener and observability (GriptapeCloudStructure), the prompt driver, a ruleset by alias,
conversation memory in a thread by alias and the file manager driver; then its spans as the observability driver
posted them. And the vector store driver querying a knowledge base from a structure run (projects/griptape/knowledge), and an Agent
with griptape's MCPTool doing the same through this platform's /mcp."""
from __future__ import annotations

import json
import uuid
from datetime import datetime

import httpx
from griptape.drivers.file_manager.griptape_cloud import GriptapeCloudFileManagerDriver
from griptape.drivers.memory.conversation.griptape_cloud import GriptapeCloudConversationMemoryDriver
from griptape_cloud_client import models as m

from support import API_KEY, BASE_URL, MODEL, call, client_for, raw, strict_events, wait_until


def run_agent(client, structure_id: str, *args: str) -> dict:
    run = call("structure_runs.create_structure_run", client, structure_id, body=m.CreateStructureRunRequestContent(args=list(args)))
    done = wait_until(f"run {run.structure_run_id}", lambda: (
        r := call("structure_runs.get_structure_run", client, run.structure_run_id)).status.value in ("SUCCEEDED", "FAILED", "ERROR", "CANCELLED") and r,
        timeout=180)
    logs = call("structure_runs.list_structure_run_logs", client, run.structure_run_id).logs
    assert done.status.value == "SUCCEEDED", "\n".join([str(done.status_detail), *logs])
    return {"run": done, "logs": logs}


def test_agent_with_cloud_drivers(agent_structure, griptape_project):
    client = client_for()
    rule = call("rules.create_rule", client, body=m.CreateRuleRequestContent(name="brevity", rule="Answer in one word."))
    rules_alias, thread_alias = f"rules-{uuid.uuid4().hex}", f"thread-{uuid.uuid4().hex}"
    call("rulesets.create_ruleset", client, body=m.CreateRulesetRequestContent.from_dict({"name": "compat", "alias": rules_alias, "rule_ids": [rule.rule_id]}))

    first = run_agent(client, agent_structure.structure_id, "first question", thread_alias, rules_alias)
    second = run_agent(client, agent_structure.structure_id, "second question", thread_alias, rules_alias)

    # The run's output is what the event listener posted (FinishStructureRunEvent): the scripted model's report
    # of what reached it, through the prompt driver and /api/chat/messages.
    answers = [r["run"].output["value"] for r in (first, second)]
    seen = [json.loads(a) for a in answers]
    assert all("Answer in one word." in s["system"] for s in seen), "the ruleset's rule reached the model"
    assert seen[0]["input"] == "first question" and seen[0]["history"] == []
    # Conversation memory: the second run's prompt carries the first exchange, read back from the thread.
    assert seen[1]["history"] == ["user: first question", f"assistant: {answers[0]}"]
    threads = call("threads.list_threads", client, alias=thread_alias).threads
    assert [t.message_count for t in threads] == [2]

    # The same thread in an assistant run: the agent's exchanges (artifact JSON, as the memory driver stores them)
    # reach the model as their text, and the assistant's exchange is stored so that the memory driver loads it.
    assistant = call("assistants.create_assistant", client, body=m.CreateAssistantRequestContent(name="compat-thread"))
    in_thread = call("assistant_runs.create_assistant_run", client, assistant.assistant_id, body=m.CreateAssistantRunRequestContent(
        input_="third question", model=MODEL, thread_id=threads[0].thread_id))
    done = wait_until(f"assistant run {in_thread.assistant_run_id}", lambda: (
        r := call("assistant_runs.get_assistant_run", client, in_thread.assistant_run_id)).status.value in ("SUCCEEDED", "FAILED", "ERROR", "CANCELLED") and r)
    assert done.status.value == "SUCCEEDED", done.status_detail
    third = done.output["value"]
    assert json.loads(third)["history"] == [
        "user: first question", f"assistant: {answers[0]}", "user: second question", f"assistant: {answers[1]}"]
    loaded, _ = GriptapeCloudConversationMemoryDriver(thread_id=threads[0].thread_id).load()
    assert [(r.input.value, r.output.value) for r in loaded] == [
        ("first question", answers[0]), ("second question", answers[1]), ("third question", third)]

    # Events: the framework's own, as USER events, before the SYSTEM completion.
    events = call("events.list_events", client, second["run"].structure_run_id, limit="1000").events
    user_types = [e.type_ for e in events if e.origin == "USER"]
    assert {"StartStructureRunEvent", "FinishStructureRunEvent"} <= set(user_types), user_types
    assert events[-1].type_ == "StructureRunCompleted"

    # The file manager driver saved the answer in the default bucket (GT_CLOUD_BUCKET_ID); it reads back here.
    assert "loaded back: True" in second["logs"]
    bucket_id = griptape_project["organization"].default_bucket_id
    files = GriptapeCloudFileManagerDriver(bucket_id=bucket_id, workdir="/answers")
    for r, answer in zip((first, second), answers):
        assert files.load_file(f"{r['run'].structure_run_id}.txt").value == answer.encode()
    assert sorted(files.try_list_files("")) == sorted(f"answers/{r['run'].structure_run_id}.txt" for r in (first, second))

    # Spans: posted by the observability driver, listed in the order of their start, linked by parent ids.
    response = raw("GET", f"/api/structure-runs/{second['run'].structure_run_id}/spans?page_size=100")
    assert response.status_code == 200, response.text
    spans = response.json()["spans"]
    assert spans, "the observability driver posted spans"
    starts = [datetime.fromisoformat(s["start_time"].replace("Z", "+00:00")) for s in spans]
    assert starts == sorted(starts)
    ids = {s["span_id"] for s in spans}
    assert len({s["trace_id"] for s in spans}) == 1
    assert all(s["parent_id"] is None or s["parent_id"] in ids for s in spans)
    assert any("Agent" in s["name"] or "run" in s["name"] for s in spans), [s["name"] for s in spans]


def test_structure_run_driver_reads_the_event_stream_to_its_close(agent_structure):
    """griptape's GriptapeCloudStructureRunDriver, unmodified, as its try_run does it: create a run, then read its event
    stream line by line up to the close, decoding every `data:` line as an event. Every one is a full EventDetail of
    the run, to the last: the end of the stream is a comment line (`: end SUCCEEDED`), which line readers skip; the
    `event: end` frame comes only to a client that asks for it (`?end_event=true`)."""
    from griptape.artifacts import TextArtifact
    from griptape.drivers.structure_run.griptape_cloud import GriptapeCloudStructureRunDriver

    client = client_for()
    rule = call("rules.create_rule", client, body=m.CreateRuleRequestContent(name="driver", rule="Answer in one word."))
    rules_alias, thread_alias = f"rules-{uuid.uuid4().hex}", f"thread-{uuid.uuid4().hex}"
    call("rulesets.create_ruleset", client, body=m.CreateRulesetRequestContent.from_dict({"name": "driver", "alias": rules_alias, "rule_ids": [rule.rule_id]}))
    driver = GriptapeCloudStructureRunDriver(base_url=BASE_URL, api_key=API_KEY, structure_id=agent_structure.structure_id)
    run_id = driver._create_run(TextArtifact("driven"), TextArtifact(thread_alias), TextArtifact(rules_alias))
    output = driver._get_run_result(run_id)
    assert json.loads(output.value)["input"] == "driven"
    events = list(driver._get_run_events(run_id))
    assert events[-1]["type"] == "StructureRunCompleted"
    assert all(m.EventDetail.from_dict(e).structure_run_id == run_id for e in events)
    stream = raw("GET", f"/api/structure-runs/{run_id}/events/stream").text
    assert [e.to_dict() for e in strict_events(stream, m.EventDetail, "structure_run_id", run_id)] == [
        m.EventDetail.from_dict(e).to_dict() for e in events]
    asked = raw("GET", f"/api/structure-runs/{run_id}/events/stream?end_event=true").text
    assert asked.endswith('event: end\ndata: {"status":"SUCCEEDED","type":"StreamEnd","origin":"SYSTEM","payload":{"status":"SUCCEEDED"}}\n\n: end SUCCEEDED\n\n')


def test_vector_store_driver_and_mcp_tool_query_a_knowledge_base(knowledge_structure):
    """GriptapeCloudVectorStoreDriver in a structure run queries a knowledge base with the run's own credential
    (the structure sets no GT_CLOUD_API_KEY): the entries parse, filters apply, and each becomes a TextArtifact.
    Then an Agent with MCPTool in a structure run answers from the same knowledge base through /mcp."""
    client = client_for()
    bucket = call("buckets.create_bucket", client, body=m.CreateBucketRequestContent(name="vector-store"))
    for name, text in (("docs/a.txt", b"Tarmac keeps vectors in PostgreSQL with pgvector."),
                       ("docs/b.txt", b"PostgreSQL also stores the jobs of Tarmac.")):
        call("assets.create_asset", client, bucket.bucket_id, body=m.CreateAssetRequestContent(name=name))
        url = call("assets.create_asset_url", client, bucket.bucket_id, name, body=m.CreateAssetUrlRequestContent())
        assert httpx.put(url.url, content=text).status_code == 200
    kb = call("knowledge_bases.create_knowledge_base", client, body=m.CreateKnowledgeBaseRequestContent.from_dict({
        "name": "vector store", "type": "gtc_hybrid_sql_pg_vector", "asset_paths": [f"{bucket.bucket_id}/docs/"],
        "config": {"gtc_hybrid_sql_pg_vector": {"structured_columns": [], "unstructured_columns": []}}}))
    job = call("knowledge_base_jobs.create_knowledge_base_job", client, kb.knowledge_base_id)
    seen = {}
    def ended():
        seen["job"] = call("knowledge_base_jobs.get_knowledge_base_job", client, job.knowledge_base_job_id).to_dict()
        return seen["job"]["status"] in ("SUCCEEDED", "FAILED", "CANCELLED")
    try:
        wait_until(f"job {job.knowledge_base_job_id}", ended, timeout=300)
    except AssertionError as e:
        raise AssertionError(f"{e}; last seen: {seen.get('job')}") from None
    assert seen["job"]["status"] == "SUCCEEDED", seen["job"]

    result = run_agent(client, knowledge_structure.structure_id, kb.knowledge_base_id, "vectors in PostgreSQL")
    entries = json.loads(result["logs"][-1])
    assert [e["namespace"] for e in entries] == [f"{bucket.bucket_id}/docs/a.txt"], entries
    # The chunk's text starts with its heading line (the asset's name: docs/knowledge-bases.md#jobs).
    assert entries[0]["text"] == "a\n\nTarmac keeps vectors in PostgreSQL with pgvector."
    assert entries[0]["score"] > 0

    # griptape's MCPTool in an Agent, in a structure run, pointed at this platform's /mcp with the run's credential:
    # the model calls the knowledge base's query tool through it and answers with what it found.
    result = run_agent(client, knowledge_structure.structure_id, "--mcp", kb.knowledge_base_id, "vectors in PostgreSQL")
    # griptape's own log lines come between the structure's: its lines are found by what they start with.
    activities = json.loads(next(line for line in result["logs"] if line.startswith("activities: "))[len("activities: "):])
    assert f"query_knowledge_base_vector_store_{kb.knowledge_base_id.replace('-', '')[:8]}" in activities, activities
    answer = json.loads(next(line for line in reversed(result["logs"]) if line.startswith('{"answer": ')))["answer"]
    assert answer.startswith("tool said: "), answer
    assert "Tarmac keeps vectors in PostgreSQL with pgvector." in answer, answer
    call("knowledge_bases.delete_knowledge_base", client, kb.knowledge_base_id)
