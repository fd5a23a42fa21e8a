"""A griptape BaseTool deployed as a tool (projects/griptape/tool), and a Node.js tool (projects/node-tool), each
called by an Agent through GriptapeCloudToolTool, with the model reached through GriptapeCloudPromptDriver
(griptape's own drivers)."""
from __future__ import annotations

import json

from griptape.drivers.prompt.griptape_cloud import GriptapeCloudPromptDriver
from griptape.structures import Agent
from griptape.tools.griptape_cloud_tool.tool import GriptapeCloudToolTool

from support import API_KEY, BASE_URL, MODEL, raw


def test_base_tool_through_griptape_cloud_tool_tool(words_tool):
    document = raw("GET", f"/api/tools/{words_tool.tool_id}/openapi").json()
    assert document["info"]["title"] == "WordTool"
    activity = document["paths"]["/activities/reverse_words"]["post"]
    assert activity["description"] == "Reverses the order of the words of a text."
    assert "text" in json.dumps(activity["requestBody"]["content"]["application/json"]["schema"])

    tool = GriptapeCloudToolTool(tool_id=words_tool.tool_id, base_url=BASE_URL, api_key=API_KEY)
    assert tool.name == "WordTool"
    # The scripted model calls the function it is told to, then answers with what the tool said.
    agent = Agent(prompt_driver=GriptapeCloudPromptDriver(model=MODEL, base_url=BASE_URL, api_key=API_KEY), tools=[tool])
    output = agent.run('call WordTool_reverse_words {"text": "one two three"}').output.value
    assert output == "tool said: three two one"


def test_node_tool_through_griptape_cloud_tool_tool(node_words_tool):
    tool = GriptapeCloudToolTool(tool_id=node_words_tool.tool_id, base_url=BASE_URL, api_key=API_KEY)
    assert tool.name == "NodeWordTool"
    agent = Agent(prompt_driver=GriptapeCloudPromptDriver(model=MODEL, base_url=BASE_URL, api_key=API_KEY), tools=[tool])
    output = agent.run('call NodeWordTool_reverse_words {"text": "one two three"}').output.value
    assert output == "tool said: three two one"
