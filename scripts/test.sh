#!/usr/bin/env bash
# The test suite, as the README gives it: installs what toolsmith is tested against (the
# official MCP servers, SDK and conformance suite, pinned; nothing when already installed),
# runs every test of the workspace, then the conformance suite over HTTP.
set -euo pipefail
cd "$(dirname "$0")/.."
bash interop/setup.sh
cargo test --workspace "$@"
bash interop/conformance.sh
