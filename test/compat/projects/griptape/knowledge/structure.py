"""griptape reading a knowledge base inside a deployed structure, with the run's own credential (GT_CLOUD_API_KEY and
GT_CLOUD_BASE_URL, set by the platform), two ways:

- `structure.py <knowledge base id> <query>`: GriptapeCloudVectorStoreDriver, unmodified, queries it and prints what
  it read back, as JSON: each entry's id, score, namespace, and the text of the artifact griptape makes of it.
- `structure.py --mcp <knowledge base id> <query>`: an Agent with griptape's MCPTool pointed at this platform's
  /mcp (Streamable HTTP) calls the knowledge base's query tool, and prints the agent's answer. The model (the
  test's scripted agent) calls the function its prompt names, then answers with what the tool said.
"""
import json
import os
import sys


def vector_store(knowledge_base_id: str, query: str) -> None:
    from griptape.drivers.vector.griptape_cloud import GriptapeCloudVectorStoreDriver

    driver = GriptapeCloudVectorStoreDriver(knowledge_base_id=knowledge_base_id)
    entries = driver.query(query, count=2, filter={"asset_name": "docs/a.txt"})
    print(json.dumps([
        {"id": e.id, "score": e.score, "namespace": e.namespace, "text": e.to_artifact().value} for e in entries
    ]))


def mcp_agent(knowledge_base_id: str, query: str) -> None:
    from griptape.drivers.prompt.griptape_cloud import GriptapeCloudPromptDriver
    from griptape.structures import Agent
    from griptape.tools import MCPTool

    tool = MCPTool(name="Platform", connection={
        "transport": "streamable_http",
        "url": os.environ["GT_CLOUD_BASE_URL"].rstrip("/") + "/mcp",
        "headers": {"Authorization": "Bearer " + os.environ["GT_CLOUD_API_KEY"]},
    })
    # The platform names a knowledge base's query tool query_knowledge_base.<name>.<first 8 hex of its id>.
    wanted = "query_knowledge_base_"
    suffix = knowledge_base_id.replace("-", "")[:8]
    names = [tool.activity_name(a) for a in tool.activities()]
    activity = next(n for n in names if n.startswith(wanted) and n.endswith(suffix))
    print("activities:", json.dumps(sorted(names)))
    agent = Agent(prompt_driver=GriptapeCloudPromptDriver(model=os.environ["TARMAC_MODEL"]), tools=[tool])
    output = agent.run(f"call Platform_{activity} {json.dumps({'query': query})}").output.value
    print(json.dumps({"answer": output}))


if sys.argv[1] == "--mcp":
    mcp_agent(*sys.argv[2:4])
else:
    vector_store(*sys.argv[1:3])
