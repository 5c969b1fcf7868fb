#!/usr/bin/env bash
# The official MCP conformance suite (pinned in package-lock.json, run by its own Node) against
# toolsmith over streamable HTTP:
#
#   1. `toolsmith proxy --http` in front of fixture-server.mjs, a server written with the
#      official TypeScript SDK that offers every tool, resource and prompt the suite asks for,
#      served the way of the handshake era;
#   2. `toolsmith proxy --http` in front of the same fixture serving MCP 2026-07-28 only
#      (`--modern`);
#   3. `toolsmith serve --http --config`, a registry of the standard tools and of the
#      fixture's tools reached through toolsmith's MCP client.
#
# Each runs the requirement sets of 2025-11-25 and of 2026-07-28 (`--requirements`: what each
# revision requires, frozen at its release, run at its wire version). What a front is expected
# to fail is listed in conformance-<front>-<revision>.yml, a reason for every line (a fix that
# makes one pass fails the run until the list says so).
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
trap 'exit 1' INT TERM

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

# One requirement set (the scenarios a revision of the protocol requires, run at its wire
# version) against one front; `baseline` lists the scenarios it is expected to fail, with why.
run() {
    local name=$1 url=$2 requirements=$3 baseline=$4
    echo "== conformance: $name ($url), the $requirements requirements"
    local args=(server --url "$url" --requirements "$requirements")
    [[ -f $baseline ]] && args+=(--expected-failures "$PWD/$baseline")
    (cd "$work" && "$OLDPWD/$node" "$OLDPWD/$suite" "${args[@]}") 2>&1 \
        | sed -n '/=== SUMMARY ===/,$p'
    return "${PIPESTATUS[0]}"
}

# The suite sends no token: the endpoints take requests without one, on loopback, for its run.
# The fixture served the way of the handshake era (the proxy carries a server's questions
# across to a 2026-07-28 client), and the way of 2026-07-28 (discovered, its InputRequiredResults
# its own), each behind a proxy.
proxy_url=$(start proxy proxy --artifacts "$work/artifacts" --http 127.0.0.1:0 --allow-unauthenticated \
    -- "$node" fixture-server.mjs)
modern_url=$(start modern proxy --artifacts "$work/modern-artifacts" --http 127.0.0.1:0 --allow-unauthenticated \
    -- "$node" fixture-server.mjs --modern)
mkdir -p "$work/root"
printf '{"mcpServers": {"fixture": {"command": "%s", "args": ["%s"]}}}\n' \
    "$PWD/$node" "$PWD/fixture-server.mjs" > "$work/fixture.json"
serve_url=$(start serve serve --root "$work/root" --artifacts "$work/serve-artifacts" \
    --config "$work/fixture.json" --http 127.0.0.1:0 --allow-unauthenticated)
# The six runs at once: each mostly waits on the fronts' answers (the suite's own timeouts
# among them), and they share nothing but the fronts, which serve each run's sessions apart.
runs=()
for requirements in 2025-11-25 2026-07-28; do
    runs+=("proxy|toolsmith proxy in front of the fixture of the handshake era|$proxy_url|$requirements")
    runs+=("modern|toolsmith proxy in front of the fixture of 2026-07-28|$modern_url|$requirements")
    runs+=("serve|toolsmith serve (the standard tools, and the fixture's through the MCP client)|$serve_url|$requirements")
done
pids=()
for entry in "${runs[@]}"; do
    IFS='|' read -r front name url requirements <<<"$entry"
    run "$name" "$url" "$requirements" "conformance-$front-$requirements.yml" \
        > "$work/run-$front-$requirements.log" 2>&1 &
    pids+=($!)
done
status=0
for i in "${!runs[@]}"; do
    IFS='|' read -r front _ _ requirements <<<"${runs[$i]}"
    wait "${pids[$i]}" || status=1
    cat "$work/run-$front-$requirements.log"
done
exit $status
