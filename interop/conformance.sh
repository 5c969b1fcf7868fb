#!/usr/bin/env bash
# The official MCP conformance suite (pinned in package-lock.json, run by its own Node) against
# toolsmith over streamable HTTP:
#
#   1. `toolsmith proxy --http` in front of fixture-server.mjs, a server written with the
#      official TypeScript SDK that offers every tool, resource and prompt the suite asks for:
#      every scenario must pass.
#   2. `toolsmith serve --http --config`, a registry of the standard tools and of the
#      fixture's tools reached through toolsmith's MCP client: the scenarios a registry does
#      not serve (resources, prompts, logging, a server's own requests) are expected to fail,
#      and are listed in conformance-serve.yml with why (a fix that makes one pass fails the
#      run until the list says so).
#
# Needs a built `toolsmith` (target/debug) and interop/setup.sh done.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
toolsmith=${TOOLSMITH:-$root/target/debug/toolsmith}
node=node_modules/.bin/node
suite=node_modules/@modelcontextprotocol/conformance/dist/index.js
work=$(mktemp -d)
# Each server's pid is written to a file: `start` runs in a command substitution (a subshell),
# so a variable it set would never reach the cleanup. Each runs in a process group of its own
# (setsid), which the cleanup kills whole: the servers' own children go with them.
cleanup() {
    local file
    for file in "$work"/*.pid; do
        [[ -e $file ]] || continue
        kill -TERM -- "-$(cat "$file")" 2>/dev/null || true
    done
    sleep 0.5
    for file in "$work"/*.pid; do
        [[ -e $file ]] || continue
        kill -KILL -- "-$(cat "$file")" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

# Starts `toolsmith ARGS… --http 127.0.0.1:0` and prints the URL it announces.
start() {
    local name=$1 log=$work/$1.log
    shift
    setsid "$toolsmith" "$@" > /dev/null 2> "$log" &
    echo $! > "$work/$name.pid"
    for _ in $(seq 100); do
        if grep -q "listening on" "$log"; then
            grep -o "http://[^ ]*" "$log" | head -1
            return
        fi
        sleep 0.1
    done
    echo "conformance: toolsmith did not start listening:" >&2
    cat "$log" >&2
    exit 1
}

run() {
    local name=$1 url=$2 baseline=$3
    echo "== conformance: $name ($url)"
    local args=(server --url "$url" --suite all)
    [[ -n $baseline ]] && args+=(--expected-failures "$PWD/$baseline")
    (cd "$work" && "$OLDPWD/$node" "$OLDPWD/$suite" "${args[@]}") 2>&1 \
        | sed -n '/=== SUMMARY ===/,$p'
    return "${PIPESTATUS[0]}"
}

# The suite sends no token: the endpoints take requests without one, on loopback, for its run.
proxy_url=$(start proxy proxy --artifacts "$work/artifacts" --http 127.0.0.1:0 --allow-unauthenticated \
    -- "$node" fixture-server.mjs)
mkdir -p "$work/root"
printf '{"mcpServers": {"fixture": {"command": "%s", "args": ["%s"]}}}\n' \
    "$PWD/$node" "$PWD/fixture-server.mjs" > "$work/fixture.json"
serve_url=$(start serve serve --root "$work/root" --artifacts "$work/serve-artifacts" \
    --config "$work/fixture.json" --http 127.0.0.1:0 --allow-unauthenticated)
status=0
run "toolsmith proxy in front of the SDK fixture" "$proxy_url" "" || status=1
run "toolsmith serve (the standard tools, and the fixture's through the MCP client)" "$serve_url" conformance-serve.yml || status=1
exit $status
