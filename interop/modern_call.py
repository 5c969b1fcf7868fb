"""The official Python SDK's `Client` in a mode of its own choosing — `legacy` (the initialize
handshake), `auto` (`server/discover`, falling back to the handshake) or `2026-07-28` (no
handshake: every request carries its envelope) — calling tools of an endpoint over streamable
HTTP, or of a server it starts over stdio. Prints the protocol version it settled on, the tools
listed and, per call, the result or what was raised, as one JSON object.

    python modern_call.py MODE URL TOOL ARGUMENTS_JSON [TOOL ARGUMENTS_JSON]...
    python modern_call.py MODE --stdio 'COMMAND ARG…' TOOL ARGUMENTS_JSON [...]

TOOL `@read` with {"uri": …} reads a resource; `{{artifact}}` in ARGUMENTS_JSON stands for the
last artifact id the results before it named. With PROXY_TOKEN set, every HTTP request carries
it as a bearer token.
"""

import asyncio
import json
import os
import re
import shlex
import sys

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def dumped(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    mode, target, *calls = sys.argv[1:]
    if target == "--stdio":
        command, *args = shlex.split(calls.pop(0))
        server = StdioServerParameters(command=command, args=args)
        http = None
    else:
        token = os.environ.get("PROXY_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        server = streamable_http_client(target, http_client=http)
    results = []
    async with Client(server, mode=mode) as client:
        version = client.protocol_version
        tools = (await client.list_tools()).tools
        artifact = ""
        for name, arguments in zip(calls[::2], calls[1::2]):
            arguments = json.loads(arguments.replace("{{artifact}}", artifact))
            try:
                if name == "@read":
                    result = await client.read_resource(arguments["uri"])
                else:
                    result = await client.call_tool(name, arguments)
                results.append(dumped(result))
                named = re.findall(r"artifact ([0-9a-f]{32})", json.dumps(results[-1]))
                if named:
                    artifact = named[-1]
            except Exception as error:  # what the SDK raised is the report
                results.append({"raised": f"{type(error).__name__}: {error}"})
    if http is not None:
        await http.aclose()
    print(json.dumps({"version": version, "tools": [dumped(tool) for tool in tools], "results": results}))


asyncio.run(main())
