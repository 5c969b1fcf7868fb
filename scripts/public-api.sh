#!/usr/bin/env bash
# The core crate's public surface, held to the committed list (crates/core/public-api.txt), so
# it changes only on purpose: every path a user can write, each type's variants, public fields,
# methods and trait impls, read from rustdoc's JSON (the stable toolchain's own rustdoc, its JSON
# output unlocked with RUSTC_BOOTSTRAP). It also fails when an item has two homes besides a
# crate-root re-export.
#
#   bash scripts/public-api.sh            check the surface against the list
#   bash scripts/public-api.sh --update   write the surface as the new list
#
# A change to the surface updates the list in the same commit, and CHANGELOG.md says what moved
# and what to write instead.
set -euo pipefail
cd "$(dirname "$0")/.."

list=crates/core/public-api.txt
update=false
case "${1:-}" in
    --update) update=true ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) echo "public-api: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="-Z unstable-options --output-format json" \
    cargo doc -p toolsmith --all-features --no-deps --target-dir target/public-api --quiet
surface=$(mktemp)
trap 'rm -f "$surface"' EXIT
python3 scripts/public-api.py target/public-api/doc/toolsmith.json >"$surface"

if $update; then
    cp "$surface" "$list"
    echo "public-api: wrote $(wc -l <"$list") lines to $list"
    exit 0
fi
if ! diff -u "$list" "$surface"; then
    echo "public-api: the public surface changed (above: - the list, + now). If on purpose, run" >&2
    echo "  bash scripts/public-api.sh --update, and say in CHANGELOG.md what moved" >&2
    exit 1
fi
echo "public-api: $(wc -l <"$list") lines, as listed"
