# What the corpus's generators share (sourced by generate.sh and generate-field.sh): a scratch
# folder removed at exit, a quiet and reproducible environment, and the helpers that write an
# output (`out NAME`, from standard input) and its must-see lines.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="$work/target" CARGO_TERM_PROGRESS_WHEN=never LC_ALL=C.UTF-8
unset RUST_BACKTRACE RUST_LIB_BACKTRACE

out() { cat > "$here/$1.out"; }
# The lines of an output that contain one of the given fixed strings, as must-see lines.
must_grep() {
    local name="$1"; shift
    local args=()
    for pattern in "$@"; do args+=(-e "$pattern"); done
    grep -F "${args[@]}" "$here/$name.out" > "$here/$name.must"
}
