#!/usr/bin/env bash
# Every published crate packaged as crates.io would receive it, in dependency order, and the
# build of each package verified (`cargo package`: what `cargo publish --dry-run` checks, for
# the whole workspace at once, members that depend on each other packaged together). The
# packages land in target/package/. The gate, the macros' compile errors and the root package are
# not published.
set -euo pipefail
cd "$(dirname "$0")/.."
# Cargo verifies the packages against a registry of its own made in target/package/, and unpacks
# each into the cargo home under a name derived from the checkout's path. A package of the same
# version unpacked there by an earlier run is never unpacked again: the build would verify the
# old sources (a fresh clone at a path packaged before failed so). Our own packages' unpacked
# copies are removed first; nothing else in the cargo home is touched.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
for crate in toolsmith-macros toolsmith toolsmith-std toolsmith-cli toolsmith-rig; do
    # Local registries' directories are named "-<hash>" (no host); crates.io's are not.
    rm -rf "$cargo_home"/registry/src/-*/"$crate"-[0-9]*
done
# Cargo takes a registry package's build for done by its name and version alone, never by its
# sources: a build of our packages verified by an earlier run (the same version, older sources)
# would be linked as it is, and the verify fail on an item moved since, or pass on one removed.
# Their builds are removed first (the workspace's own builds of them too: a fresh run has none).
cargo clean --quiet -p toolsmith-macros -p toolsmith -p toolsmith-std -p toolsmith-cli -p toolsmith-rig
cargo package --workspace --exclude toolsmith-gate --exclude toolsmith-macros-ui --exclude toolsmith-workspace "$@"
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
