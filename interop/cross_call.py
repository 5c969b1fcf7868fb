"""The official Python SDK's `Client` in MODE calling TOOL with ARGUMENTS_JSON at URL, answering
whatever the server asks on the way — an elicitation (accepted, as user `ada`) and a sampling
request (the model's answer `sampled`) — however the era carries the question: a request to a
client of the handshake era, an `InputRequiredResult` to a 2026-07-28 one. Prints the result, or
what was raised, and the questions asked, as JSON.

    python cross_call.py MODE URL TOOL ARGUMENTS_JSON   (PROXY_TOKEN: the bearer token)
"""

import asyncio
import json
import os
import sys

import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main():
    mode, url, tool, arguments = sys.argv[1:]
    asked = []

    async def elicit(context, params):
        asked.append("elicitation/create")
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.org"})

    async def sample(context, params):
        asked.append("sampling/createMessage")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="sampled"), model="fixture"
        )

    token = os.environ.get("PROXY_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    try:
        async with Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            elicitation_callback=elicit,
            sampling_callback=sample,
        ) as client:
            result = await client.call_tool(tool, json.loads(arguments))
            report = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    except Exception as error:  # what the SDK raised is the report
        report = {"raised": f"{type(error).__name__}: {error}"}
    await http.aclose()
    print(json.dumps({"result": report, "asked": asked}))


asyncio.run(main())
