#!/usr/bin/env bash
# Every published crate packaged as crates.io would receive it, in dependency order, and the
# build of each package verified (`cargo package`: what `cargo publish --dry-run` checks, for
# the whole workspace at once, members that depend on each other packaged together). The
# packages land in target/package/. The gate and the root package are not published.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo package --workspace --exclude toolsmith-gate --exclude toolsmith-workspace "$@"
for crate in toolsmith-macros toolsmith toolsmith-std toolsmith-cli toolsmith-rig; do
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
