#!/usr/bin/env bash
# Installs what toolsmith is tested against — the official MCP servers, TypeScript SDK and
# conformance suite, and a Node of their own — pinned by package-lock.json, into
# interop/node_modules; and the official Python SDK, pinned by requirements.txt, into
# interop/.venv; and an S3-compatible server (moto), pinned by requirements-s3.txt, into
# interop/.venv-s3; and the signal gate's Python anchors (llmslim, tooltrim), pinned by
# requirements-anchors.txt, into interop/.venv-anchors. Run by the README's test command (and
# the signal gate); does nothing when the installs are already those of the pins.
set -euo pipefail
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "interop: npm is not installed; install Node.js (20 or later), which brings it" >&2; exit 1; }
stamp=node_modules/.toolsmith-lock
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" || ! -x node_modules/.bin/node ]]; then
    echo "interop: installing the pinned MCP servers, SDK and conformance suite (npm ci)" >&2
    npm ci --no-audit --no-fund --loglevel=error
    node_modules/.bin/node --version >/dev/null
    echo "$want" > "$stamp"
fi

command -v python3 >/dev/null || { echo "interop: python3 is not installed; install Python 3.10 or later" >&2; exit 1; }
py_stamp=.venv/.toolsmith-requirements
py_want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ ! -f $py_stamp || $(cat "$py_stamp") != "$py_want" || ! -x .venv/bin/python ]]; then
    echo "interop: installing the pinned MCP Python SDK (pip, into interop/.venv)" >&2
    rm -rf .venv
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt
    .venv/bin/python -c "import mcp.client.session" >/dev/null
    echo "$py_want" > "$py_stamp"
fi

s3_stamp=.venv-s3/.toolsmith-requirements
s3_want=$(sha256sum requirements-s3.txt | cut -d' ' -f1)
if [[ ! -f $s3_stamp || $(cat "$s3_stamp") != "$s3_want" || ! -x .venv-s3/bin/python ]]; then
    echo "interop: installing the pinned S3-compatible test server (moto[server], pip, into interop/.venv-s3)" >&2
    rm -rf .venv-s3
    python3 -m venv .venv-s3
    .venv-s3/bin/pip install --quiet --disable-pip-version-check --no-deps -r requirements-s3.txt
    .venv-s3/bin/python -c "import moto.server" >/dev/null
    echo "$s3_want" > "$s3_stamp"
fi

anchors_stamp=.venv-anchors/.toolsmith-requirements
anchors_want=$(sha256sum requirements-anchors.txt | cut -d' ' -f1)
if [[ ! -f $anchors_stamp || $(cat "$anchors_stamp") != "$anchors_want" || ! -x .venv-anchors/bin/python ]]; then
    echo "interop: installing the signal gate's Python anchors (llmslim, tooltrim: pip, into interop/.venv-anchors)" >&2
    rm -rf .venv-anchors
    python3 -m venv .venv-anchors
    .venv-anchors/bin/pip install --quiet --disable-pip-version-check --no-deps -r requirements-anchors.txt
    .venv-anchors/bin/python -c "import llmslim._fit, tooltrim" >/dev/null
    echo "$anchors_want" > "$anchors_stamp"
fi
