"""The official Python SDK's `Client` in MODE calling `write_file` of FILE at URL, answering the
server's question about it (an elicitation: sent as a request to a client of the handshake era,
returned as an `InputRequiredResult` to a 2026-07-28 one) with ANSWER (`accept` or `decline`).
Prints the result, or what was raised, as JSON.

    python approve_call.py MODE URL ANSWER FILE   (PROXY_TOKEN: the bearer token)
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
    mode, url, answer, path = sys.argv[1:]

    async def elicit(context, params):
        content = {"approve": True} if answer == "accept" else None
        return types.ElicitResult(action=answer, content=content)

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {os.environ['PROXY_TOKEN']}"}, timeout=60)
    try:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=elicit) as client:
            result = await client.call_tool("write_file", {"path": path, "content": "hello"})
            report = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    except Exception as error:  # what the SDK raised is the report
        report = {"raised": f"{type(error).__name__}: {error}"}
    await http.aclose()
    print(json.dumps(report))


asyncio.run(main())
