"""A server written with the official MCP Python SDK's `MCPServer`, over stdio.

Its tools are typed functions: the SDK lists each with an `outputSchema` made from the return
type and answers with the text and `structuredContent` (`{"result": ...}` for a `str`), and its
client raises when a tool with a schema answers a success without a structure.

    python sdk_server.py              (stdio)
    python sdk_server.py --http PORT  (the SDK's own streamable HTTP server on 127.0.0.1:PORT/mcp)
"""

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("typed")


@app.tool()
def hello(name: str, times: int = 1) -> str:
    """Greets `name`, `times` times, one greeting a line."""
    return "".join(f"hello, {name} ({i})\n" for i in range(1, times + 1)) if times > 1 else f"hello, {name}"


@app.tool()
def refuse(name: str) -> str:
    """Always fails, naming `name`."""
    raise ToolError(f"{name} is not allowed here")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
