"""A server that speaks MCP 2026-07-28 only, over stdio, built from the official Python SDK's own
parts: its `MCPServer` tools served by the SDK's modern serving loop alone (the one its dual-era
servers use once a client's first request carries the envelope), so `initialize` is refused
with -32022 naming 2026-07-28. Its `echo` tool returns its text, `big` returns `lines` numbered
lines, `greet` asks the user who they are (an `InputRequiredResult`, the SDK's own multi-round
flow) and greets them.

    python modern_server.py              (stdio)
    python modern_server.py --http PORT  (streamable HTTP on 127.0.0.1:PORT/mcp, every request
                                          served by the SDK's own single-exchange modern entry;
                                          `initialize` answered 400, -32022)
    python modern_server.py --public [--http PORT]
                                         (the same tools as a user of the SDK's public API writes
                                          such a server: `MCPServer.run`, the SDK's ordinary
                                          dual-era loop, with a server middleware refusing
                                          `initialize` with -32022; the loop decides a
                                          connection's era by its first request, once, so a
                                          client that opens with `initialize` is refused and
                                          stays in the handshake era)

With `MODERN_SERVER_STARTS` set to a file's path, each start appends a line to it (a client
that starts the server more often than it needs to is seen).
"""

import json
import os
import sys

from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from mcp.shared.exceptions import MCPError
from mcp.server.runner import _serve_modern_stream
from mcp.server.stdio import stdio_server

app = MCPServer("modern-only")


@app.tool()
def echo(text: str) -> str:
    """Returns its text."""
    return text


@app.tool()
def big(lines: int = 3000) -> str:
    """Returns `lines` numbered lines."""
    return "".join(f"line {i} of the output\n" for i in range(1, lines + 1))


class Who(BaseModel):
    username: str


def ask_who() -> Elicit[Who]:
    return Elicit("Who are you?", Who)


@app.tool()
def greet(who: Annotated[Who, Resolve(ask_who)]) -> str:
    """Greets whoever the user says they are."""
    return f"hello, {who.username}"


async def main():
    server = app._lowlevel_server
    async with server.lifespan(server) as state:
        async with stdio_server() as (read_stream, write_stream):
            await _serve_modern_stream(server, read_stream, write_stream, lifespan_state=state, raise_exceptions=False)


async def serve_http(port: int):
    import uvicorn
    from mcp.server._streamable_http_modern import handle_modern_request

    server = app._lowlevel_server
    async with server.lifespan(server) as state:

        async def asgi(scope, receive, send):
            if scope["type"] != "http":
                return
            body = b""
            more = True
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message.get("more_body", False)
            try:
                request = json.loads(body)
            except ValueError:
                request = {}
            if isinstance(request, dict) and request.get("method") == "initialize":
                error = {"jsonrpc": "2.0", "id": request.get("id"), "error": {
                    "code": -32022, "message": "this server speaks 2026-07-28 only: no initialize handshake",
                    "data": {"supported": ["2026-07-28"], "requested": request.get("params", {}).get("protocolVersion")}}}
                payload = json.dumps(error).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": payload})
                return

            async def replay():
                return {"type": "http.request", "body": body, "more_body": False}

            await handle_modern_request(server, None, True, state, scope, replay, send)

        config = uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
        await uvicorn.Server(config).serve()


async def refuse_initialize(ctx, call_next):
    """The handshake refused, as a 2026-07-28-only server written with the public API does."""
    if ctx.method == "initialize":
        requested = (ctx.params or {}).get("protocolVersion")
        raise MCPError(-32022, "this server speaks 2026-07-28 only: no initialize handshake",
                       {"supported": ["2026-07-28"], "requested": requested})
    return await call_next(ctx)


if __name__ == "__main__":
    if "MODERN_SERVER_STARTS" in os.environ:
        with open(os.environ["MODERN_SERVER_STARTS"], "a") as starts:
            starts.write(f"started {os.getpid()}\n")
    if len(sys.argv) >= 2 and sys.argv[1] == "--public":
        app.middleware.append(refuse_initialize)
        if len(sys.argv) == 4 and sys.argv[2] == "--http":
            app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[3]), streamable_http_path="/mcp")
        else:
            app.run()
    elif len(sys.argv) == 3 and sys.argv[1] == "--http":
        anyio.run(serve_http, int(sys.argv[2]))
    else:
        anyio.run(main)
