"""A server that speaks MCP 2026-07-28 only, over stdio, built from the official Python SDK's own
parts: its `MCPServer` tools served by the SDK's modern serving loop alone (the one its dual-era
servers use once a client's first request carries the envelope), so `initialize` is refused
with -32022 naming 2026-07-28. Its `echo` tool returns its text, `big` returns `lines` numbered
lines.

    python modern_server.py
"""

import anyio

from mcp.server.mcpserver import MCPServer
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


async def main():
    server = app._lowlevel_server
    async with server.lifespan(server) as state:
        async with stdio_server() as (read_stream, write_stream):
            await _serve_modern_stream(server, read_stream, write_stream, lifespan_state=state, raise_exceptions=False)


if __name__ == "__main__":
    anyio.run(main)
