#!/usr/bin/env bash
# The instruction-count gate: every hot path (crates/gate/src/main.rs) run once under valgrind's
# callgrind, its instructions counted, and the count held to the committed baseline
# (crates/gate/baseline.txt). Instruction counts do not drift with the machine's load, so a figure
# more than 5% above its baseline is a change, not noise: the gate fails and names it.
#
#   bash scripts/perf-gate.sh            check every case against the baseline
#   bash scripts/perf-gate.sh --update   write the counts as the new baseline
#   bash scripts/perf-gate.sh CASE...    check these cases only
#
# A change that makes a path slower on purpose updates the baseline in the same commit and says
# why in BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

baseline=crates/gate/baseline.txt
limit_percent=5

update=false
cases=()
for arg in "$@"; do
    case "$arg" in
        --update) update=true ;;
        -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "perf-gate: unknown option $arg (see --help)" >&2; exit 2 ;;
        *) cases+=("$arg") ;;
    esac
done

command -v valgrind >/dev/null || {
    echo "perf-gate: valgrind is not installed (Debian's package valgrind); it counts the instructions" >&2
    exit 2
}

echo "== building the gate's cases (cargo build --profile gate -p toolsmith-gate)"
cargo build --profile gate -p toolsmith-gate
bin=target/gate/toolsmith-gate
[ -x "$bin" ] || { echo "perf-gate: the gate's binary was not built" >&2; exit 2; }

if [ ${#cases[@]} -eq 0 ]; then
    mapfile -t cases < <("$bin" --list)
fi

# The instructions of one case's measured part.
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        --toggle-collect='*gate::measured*' "$bin" "$1" 2>&1 >/dev/null |
        awk '/Collected :/ { print $NF }'
}

declare -A base=()
if [ -f "$baseline" ]; then
    while read -r name figure; do
        case "$name" in '' | \#*) continue ;; esac
        base[$name]=$figure
    done <"$baseline"
fi

declare -A now=()
failed=0
printf '%-32s %15s %15s %9s\n' case baseline now change
for case in "${cases[@]}"; do
    figure=$(count "$case")
    [ -n "$figure" ] || { echo "perf-gate: case $case did not run under valgrind" >&2; exit 2; }
    now[$case]=$figure
    was=${base[$case]:-}
    if [ -z "$was" ]; then
        printf '%-32s %15s %15s %9s\n' "$case" "-" "$figure" "new"
        $update || failed=1
        continue
    fi
    change=$(awk -v a="$figure" -v b="$was" 'BEGIN { printf "%+.2f%%", (a - b) * 100 / b }')
    verdict=""
    if awk -v a="$figure" -v b="$was" -v l="$limit_percent" 'BEGIN { exit !(a > b * (1 + l / 100)) }'; then
        verdict="  over the limit of +${limit_percent}%"
        failed=1
    elif awk -v a="$figure" -v b="$was" -v l="$limit_percent" 'BEGIN { exit !(a < b * (1 - l / 100)) }'; then
        verdict="  faster: record it with --update"
    fi
    printf '%-32s %15s %15s %9s%s\n' "$case" "$was" "$figure" "$change" "$verdict"
done

if $update; then
    for case in "${cases[@]}"; do base[$case]=${now[$case]}; done
    {
        echo "# Instructions counted by callgrind in each case of crates/gate/src/main.rs, as scripts/perf-gate.sh"
        echo "# runs it (cargo build --profile gate -p toolsmith-gate). Written by: bash scripts/perf-gate.sh --update"
        for name in $(printf '%s\n' "${!base[@]}" | sort); do
            echo "$name ${base[$name]}"
        done
    } >"$baseline"
    echo "perf-gate: baseline written to $baseline"
    exit 0
fi

if [ "$failed" -ne 0 ]; then
    echo "perf-gate: FAILED — a case counts more than ${limit_percent}% over its baseline, or has none." >&2
    echo "  A slowdown on purpose: bash scripts/perf-gate.sh --update, and say why in BENCHMARKS.md." >&2
    exit 1
fi
echo "perf-gate: every case within ${limit_percent}% of its baseline"
