"""A server of the handshake era (2025-11-25) as some SDKs make one: any request before
`initialize` ends the process (exit status 3, a line on stderr saying why), so a client that
probes with `server/discover` must start it again to speak to it. Its one tool, `echo`,
returns its text. Standard library only; JSON-RPC a line each on stdio.

With `STRICT_SERVER_STARTS` set to a file's path, each start appends a line to it.
"""

import json
import os
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    if "STRICT_SERVER_STARTS" in os.environ:
        with open(os.environ["STRICT_SERVER_STARTS"], "a") as starts:
            starts.write(f"started {os.getpid()}\n")
    initialized = False
    for line in sys.stdin:
        message = json.loads(line)
        method, id_ = message.get("method"), message.get("id")
        if id_ is None:
            continue  # notifications
        if not initialized and method != "initialize":
            sys.stderr.write(f"strict server: `{method}` before `initialize`; exiting\n")
            sys.exit(3)
        if method == "initialize":
            initialized = True
            send({"jsonrpc": "2.0", "id": id_, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "strict-legacy", "version": "1.0.0"},
            }})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": [{
                "name": "echo", "description": "Returns its text.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                                "required": ["text"]},
            }]}})
        elif method == "tools/call":
            text = message.get("params", {}).get("arguments", {}).get("text", "")
            send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": text}]}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": id_, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": f"no method `{method}`"}})


if __name__ == "__main__":
    main()
