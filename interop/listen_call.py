"""The official Python SDK's `Client` at protocol 2026-07-28 opening a `subscriptions/listen`
stream at URL (tool list changes, and the updates of resource URI), calling TOOL while it
listens, and collecting the stream's events until both kinds came (or 10 seconds passed).
Prints what the server honored, the events and the tool's result, as JSON.

    python listen_call.py URL URI TOOL   (PROXY_TOKEN: the bearer token)
"""

import asyncio
import json
import os
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main():
    url, uri, tool = sys.argv[1:]
    token = os.environ.get("PROXY_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    events = []
    async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client:
        async with client.listen(tools_list_changed=True, resource_subscriptions=[uri]) as subscription:
            honored = subscription.honored.model_dump(mode="json", by_alias=True, exclude_none=True)
            result = await client.call_tool(tool, {})
            with anyio.move_on_after(10):
                async for event in subscription:
                    events.append({"kind": type(event).__name__, **{k: str(v) for k, v in vars(event).items()}})
                    if len({event["kind"] for event in events}) == 2:
                        break
    await http.aclose()
    report = {
        "honored": honored,
        "events": events,
        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
    }
    print(json.dumps(report))


asyncio.run(main())
