#!/usr/bin/env bash
# Installs what toolsmith is tested against — the official MCP servers, TypeScript SDK and
# conformance suite, and a Node of their own — pinned by package-lock.json, into
# interop/node_modules. Run by the README's test command; does nothing when the install is
# already that of the lock file.
set -euo pipefail
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "interop: npm is not installed; install Node.js (20 or later), which brings it" >&2; exit 1; }
stamp=node_modules/.toolsmith-lock
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" && -x node_modules/.bin/node ]]; then
    exit 0
fi
echo "interop: installing the pinned MCP servers, SDK and conformance suite (npm ci)" >&2
npm ci --no-audit --no-fund --loglevel=error
node_modules/.bin/node --version >/dev/null
echo "$want" > "$stamp"
