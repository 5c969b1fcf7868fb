#!/usr/bin/env bash
# Every published crate packaged as crates.io would receive it (`cargo package`, for the whole
# workspace at once, members that depend on each other packaged together), each package checked
# to compile as a crate of its own, and its contents checked: its licenses, no tests or fixtures.
# The packages land in target/package/. The gate, the macros' compile errors and the root package
# are not published.
set -euo pipefail
cd "$(dirname "$0")/.."
crates=(toolsmith-macros toolsmith toolsmith-std toolsmith-cli toolsmith-rig)
cargo package --workspace --exclude toolsmith-gate --exclude toolsmith-macros-ui --exclude toolsmith-workspace --no-verify "$@"

# Each package is then checked as crates.io would receive it: unpacked alone, its dependencies
# resolved for it alone (its own features, not the workspace's union) from its own lockfile,
# and the packages it depends on taken from their packages, not from the workspace's sources.
# Cargo's own verification builds each package to machine code (its dependencies with each
# package's features: jsonschema, tokio and the core four times over, 440 s of processor time);
# `cargo check` catches what the verification is for — a file left out of a package, a feature
# a package uses but does not turn on, a dependency's version too old — and the same code is
# compiled to machine code and linked by the tests. Unpacked with fresh times: the packages'
# files carry a fixed time, and an older check of the same path would be taken for current.
unpacked=target/package/unpacked
rm -rf "$unpacked"
mkdir -p "$unpacked"
for crate in "${crates[@]}"; do
    tar -xzmf "$(ls target/package/"$crate"-[0-9]*.crate)" -C "$unpacked"
done
unpacked=$(cd "$unpacked" && pwd)
for crate in "${crates[@]}"; do
    dir=$(ls -d "$unpacked/$crate"-[0-9]*)
    # Every other package of ours in its graph (its lockfile, made by `cargo package`, names them).
    patches=()
    for other in "${crates[@]}"; do
        if [[ $other != "$crate" ]] && grep -qx "name = \"$other\"" "$dir/Cargo.lock"; then
            patches+=(--config "patch.crates-io.$other.path=\"$(ls -d "$unpacked/$other"-[0-9]*)\"")
        fi
    done
    # Its sources as packaged, to hold a build that writes into them (as cargo's verification
    # does); the lockfile is the resolver's to update for the packages patched in.
    sources=$(cd "$dir" && find . -type f ! -name Cargo.lock -print0 | sort -z | xargs -0 sha256sum)
    echo "package: checking $crate as packaged"
    # rig 0.45 and later declare Rust 1.97.1 and build on this machine's 1.95 (scripts/test.sh).
    cargo check --manifest-path "$dir/Cargo.toml" --target-dir target --ignore-rust-version "${patches[@]}"
    if [[ $(cd "$dir" && find . -type f ! -name Cargo.lock -print0 | sort -z | xargs -0 sha256sum) != "$sources" ]]; then
        echo "package: checking $crate changed its packaged sources (a build script writes into them)" >&2
        exit 1
    fi
done
for crate in "${crates[@]}"; do
    file=$(ls target/package/"$crate"-[0-9]*.crate)
    files=$(tar -tzf "$file")
    # A package holds its sources and licenses, never the test fixtures.
    if grep -E '/(tests|benches|interop|fuzz)/' <<<"$files" >&2; then
        echo "package: $crate holds tests or fixtures (above)" >&2
        exit 1
    fi
    for license in LICENSE-MIT LICENSE-APACHE; do
        grep -q "/$license\$" <<<"$files" || { echo "package: $crate lacks $license" >&2; exit 1; }
    done
    echo "package: $crate, $(wc -l <<<"$files") files, $(du -h "$file" | cut -f1)"
done
