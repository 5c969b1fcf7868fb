"""The official Python SDK's client calling tools of an endpoint over streamable HTTP.

`ClientSession.call_tool` checks a result against the tool's output schema: it raises when a
tool that states one answers a success without a structure, or with one that does not match.
Prints the tools listed and, per call, the result or what was raised, as one JSON object.

    python sdk_call.py URL TOOL ARGUMENTS_JSON [TOOL ARGUMENTS_JSON]...

TOOL `@read` with {"uri": …} reads a resource; `{{artifact}}` in ARGUMENTS_JSON stands for the
last artifact id the results before it named.

With PROXY_TOKEN set, every request carries it as a bearer token.
"""

import asyncio
import json
import os
import sys

import re

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def dumped(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    url, *calls = sys.argv[1:]
    token = os.environ.get("PROXY_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = (await session.list_tools()).tools
                results = []
                artifact = ""
                for name, arguments in zip(calls[::2], calls[1::2]):
                    arguments = json.loads(arguments.replace("{{artifact}}", artifact))
                    try:
                        if name == "@read":
                            result = await session.read_resource(arguments["uri"])
                        else:
                            result = await session.call_tool(name, arguments)
                        results.append(dumped(result))
                        named = re.findall(r"artifact ([0-9a-f]{32})", json.dumps(results[-1].get("content", [])))
                        if named:
                            artifact = named[-1]
                    except Exception as error:  # what the SDK raised is the report
                        results.append({"raised": f"{type(error).__name__}: {error}"})
    print(json.dumps({"tools": [dumped(tool) for tool in tools], "results": results}))


asyncio.run(main())
