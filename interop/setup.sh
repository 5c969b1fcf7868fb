#!/usr/bin/env bash
# Installs what toolsmith is tested against — the official MCP servers, TypeScript SDK and
# conformance suite, and a Node of their own — pinned by package-lock.json, into
# interop/node_modules; and the official Python SDK, pinned by requirements.txt, into
# interop/.venv; and an S3-compatible server (moto), pinned by requirements-s3.txt, into
# interop/.venv-s3; and the signal gate's Python anchors (llmslim, tooltrim), pinned by
# requirements-anchors.txt, into interop/.venv-anchors; and nginx, Debian's package, where it is
# missing. Run by the README's test command (and
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

# nginx, Debian's package, for the test of gateway replicas behind a load balancer (the test
# starts its own, in the foreground, with a configuration of its own).
if [[ ! -x /usr/sbin/nginx && ! -x /usr/local/sbin/nginx ]]; then
    if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
        echo "interop: installing nginx (apt-get, Debian's package)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx >/dev/null; }
    else
        echo "interop: nginx is not installed, and cannot be from here; install Debian's package nginx (apt-get install nginx)" >&2
        exit 1
    fi
fi

command -v python3 >/dev/null || { echo "interop: python3 is not installed; install Python 3.10 or later" >&2; exit 1; }
# A virtual environment at $1 holding the packages pinned by $2 (what they are: $4), its import
# of $3 checked; made again only when the pins changed. Without a pip of its own where the
# system's pip can install into it (`--python`, pip 22.3 or later): a venv's own pip is 3.4 s of
# processor time to make. pip compiles the packages to bytecode: not compiled at install (21 s
# less of it), a module is compiled at each import where bytecode is not written
# (PYTHONDONTWRITEBYTECODE, as on CI's machine): the SDK's import 0.8 -> 1.2 s, every process.
venv() {
    local dir=$1 requirements=$2 check=$3 what=$4 stamp=$1/.toolsmith-requirements want
    want=$(sha256sum "$requirements" | cut -d' ' -f1)
    [[ -f $stamp && $(cat "$stamp") == "$want" && -x $dir/bin/python ]] && return
    echo "interop: installing $what (pip, into interop/$dir)" >&2
    rm -rf "$dir"
    python3 -m venv --without-pip "$dir"
    local pip=(python3 -m pip --python "$dir/bin/python")
    if ! "${pip[@]}" --version >/dev/null 2>&1; then
        "$dir/bin/python" -m ensurepip --default-pip >/dev/null
        pip=("$dir/bin/python" -m pip)
    fi
    "${pip[@]}" install --quiet --disable-pip-version-check --no-deps -r "$requirements"
    "$dir/bin/python" -c "import $check" >/dev/null
    echo "$want" > "$stamp"
}

venv .venv requirements.txt mcp.client.session "the pinned MCP Python SDK"
venv .venv-s3 requirements-s3.txt moto.server "the pinned S3-compatible test server (moto[server])"
venv .venv-anchors requirements-anchors.txt "llmslim._fit, tooltrim" "the signal gate's Python anchors (llmslim, tooltrim)"
