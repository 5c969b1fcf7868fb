#!/usr/bin/env bash
# The public surface of each library crate that is published (toolsmith, toolsmith-std,
# toolsmith-rig), held to its committed list (crates/<dir>/public-api.txt), so it changes only
# on purpose: every path a user can write, each type's variants, public fields,
# methods and trait impls, read from rustdoc's JSON (the stable toolchain's own rustdoc, its JSON
# output unlocked with RUSTC_BOOTSTRAP, seen by rustdoc alone). It also fails when an item has two homes besides a
# crate-root re-export.
#
#   bash scripts/public-api.sh            check the surface against the list
#   bash scripts/public-api.sh --update   write the surface as the new list
#
# A change to the surface updates the list in the same commit, and CHANGELOG.md says what moved
# and what to write instead.
set -euo pipefail
cd "$(dirname "$0")/.."

update=false
case "${1:-}" in
    --update) update=true ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) echo "public-api: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

surface=$(mktemp)
trap 'rm -f "$surface"' EXIT
status=0
# Each published library: its package, its directory under crates/.
published=(toolsmith:core toolsmith-std:tools-std toolsmith-rig:rig)
crates=
for pair in "${published[@]}"; do
    package=${pair%%:*}
    crates+="${package//-/_} "
done
# One rustdoc run for the whole workspace, with the targets and features `cargo doc` and clippy
# build (every library and example, every feature): the dependencies they checked are used as
# they are. RUSTC_BOOTSTRAP reaches rustdoc alone (scripts/rustdoc-unstable): cargo counts it in
# every unit's fingerprint, and would check every dependency again. Of the targets, only the
# published libraries are documented (PUBLIC_API_CRATES; the wrapper skips the rest).
PUBLIC_API_CRATES="$crates" RUSTDOC="$PWD/scripts/rustdoc-unstable" \
    RUSTDOCFLAGS="-Z unstable-options --output-format json" \
    cargo doc --workspace --all-features --no-deps --lib --examples --quiet --ignore-rust-version
for pair in "${published[@]}"; do
    package=${pair%%:*}
    list=crates/${pair#*:}/public-api.txt
    python3 scripts/public-api.py "${CARGO_TARGET_DIR:-target}/doc/${package//-/_}.json" >"$surface"
    if $update; then
        cat "$surface" >"$list"
        echo "public-api: wrote $(wc -l <"$list") lines to $list"
        continue
    fi
    if ! diff -u "$list" "$surface"; then
        echo "public-api: the public surface of $package changed (above: - the list, + now). If" >&2
        echo "  on purpose, run bash scripts/public-api.sh --update, and say in CHANGELOG.md what" >&2
        echo "  moved" >&2
        status=1
        continue
    fi
    echo "public-api: $package, $(wc -l <"$list") lines, as listed"
done
exit $status
