#!/usr/bin/env bash
# Where did a workload get slower? Builds actorium-bench at each commit given (cached by
# commit in target/perf-bisect/bins), then runs all the binaries in turn, RUNS rounds, and
# prints each one's median timed region and its ratio to the first commit's. Running the
# builds alternately in one loop makes this machine's drift (2-3x within minutes) hit them
# alike; `scripts/ab.sh` does the same for two binaries you built yourself.
#
#   scripts/perf-bisect.sh RUNS "bench1 bench2 .." "system1 .." COMMIT1 COMMIT2 ..
#   THREADS=1 scripts/perf-bisect.sh 7 "repeat" "actorium" c1cb126 HEAD
#
# THREADS (default 2) is the worker count. Builds share one target directory
# (target/perf-bisect/target), so a commit near the last one built rebuilds little; the first
# takes a few minutes on 2 cores. Never run it beside another cargo build.
set -euo pipefail
if [ $# -lt 5 ]; then
    sed -n '2,14p' "$0" >&2
    exit 2
fi
runs=$1 benches=$2 systems=$3
shift 3
root=$(git rev-parse --show-toplevel)
base="$root/target/perf-bisect"
mkdir -p "$base/bins"
tree="$base/worktree"
bins=()
for c in "$@"; do
    hash=$(git -C "$root" rev-parse --short=9 "$c^{commit}")
    bin="$base/bins/$hash"
    if [ ! -x "$bin" ]; then
        if [ ! -d "$tree" ]; then
            git -C "$root" worktree add --detach -f "$tree" "$hash" >/dev/null 2>&1
        fi
        git -C "$tree" checkout -q -f --detach "$hash"
        echo "building $c ($hash)" >&2
        (cd "$tree" && cargo build --release -q -p actorium-bench --target-dir "$base/target")
        cp "$base/target/release/actorium-bench" "$bin"
    fi
    bins+=("$bin")
done

secs() { { "$1" exec "$2" "$3" "${THREADS:-2}" 2>/dev/null || true; } | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk 'NF {a[++n]=$1} END {if (n) print a[int((n+1)/2)]}'; }

printf '%-22s %-28s' benchmark system
for c in "$@"; do printf ' %16s' "$c"; done
printf '\n'
for b in $benches; do
    for s in $systems; do
        declare -A times=()
        for _ in $(seq "$runs"); do
            for bin in "${bins[@]}"; do
                times[$bin]+="$(secs "$bin" "$b" "$s") "
            done
        done
        printf '%-22s %-28s' "$b" "$s"
        first=""
        for bin in "${bins[@]}"; do
            m=$(printf '%s\n' ${times[$bin]} | median)
            if [ -z "$m" ]; then
                printf ' %16s' n/a
            elif [ -z "$first" ]; then
                first=$m
                printf ' %16s' "$(printf '%.4f' "$m")"
            else
                printf ' %16s' "$(printf '%.4f (%.2f)' "$m" "$(echo "$m / $first" | bc -l)")"
            fi
        done
        printf '\n'
        unset times
    done
done
