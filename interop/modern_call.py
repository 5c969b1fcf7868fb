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

    python modern_call.py --runs N < RUNS_JSON

runs many of those in one process, N at a time (the SDK's import is most of a run's processor
time): RUNS_JSON is a list of the arguments each run would take, `[MODE, TARGET…, TOOL,
ARGUMENTS_JSON, …]`; it prints one list of their reports, in the same order, a run that raised
reported as {"raised": what}.
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


def said(error):
    """What was raised, the errors of a task group each named."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(said(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"


async def run(mode, target, *calls):
    calls = list(calls)
    if target == "--stdio":
        command, *args = shlex.split(calls.pop(0))
        server = StdioServerParameters(command=command, args=args)
        http = None
    else:
        token = os.environ.get("PROXY_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        server = streamable_http_client(target, http_client=http)
    try:
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
                    results.append({"raised": said(error)})
    finally:
        if http is not None:
            await http.aclose()
    return {"version": version, "tools": [dumped(tool) for tool in tools], "results": results}


async def runs(at_once, each):
    room = asyncio.Semaphore(at_once)

    async def one(arguments):
        async with room:
            try:
                return await run(*arguments)
            except Exception as error:  # what the SDK raised is the run's report
                return {"raised": said(error)}

    return await asyncio.gather(*(one(arguments) for arguments in each))


def main():
    if sys.argv[1] == "--runs":
        report = asyncio.run(runs(int(sys.argv[2]), json.load(sys.stdin)))
    else:
        report = asyncio.run(run(*sys.argv[1:]))
    print(json.dumps(report))


main()
