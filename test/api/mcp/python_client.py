"""The Python `mcp` package's client against the api's /mcp (test/api/mcp.test.ts runs it): it lists the tools,
calls the function tool named in argv[1] with {"body": {"n": 21}} and an unknown tool, and prints what it got as
one JSON line. MCP_URL and MCP_API_KEY come from the environment."""
from __future__ import annotations

import json
import os
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(function_tool: str) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['MCP_API_KEY']}"})
    async with http, streamable_http_client(os.environ["MCP_URL"], http_client=http) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            doubled = await session.call_tool(function_tool, {"body": {"n": 21}})
            unknown = await session.call_tool("execute_function.nothing.00000000", {})
            print(json.dumps({
                "tools": [t.name for t in tools.tools],
                "doubled": {"is_error": bool(doubled.is_error), "text": doubled.content[0].text},
                "unknown": {"is_error": bool(unknown.is_error), "text": unknown.content[0].text},
            }))


anyio.run(main, sys.argv[1])
