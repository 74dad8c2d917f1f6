#!/usr/bin/env bash
# Alternating A/B of two builds of actorium-bench on actorium systems: runs OLD and NEW in turn,
# RUNS times each, and prints the median timed region of each and their ratio (new / old).
# The machine's drift then hits both alike.
#
#   scripts/ab.sh OLD_BIN NEW_BIN RUNS "bench1 bench2 .." "system1 system2 .." [k=v ...]
#
# Build OLD_BIN from the old commit (e.g. in a `git worktree`, with its own --target-dir).
set -euo pipefail
old=$1 new=$2 runs=$3 benches=$4 systems=$5
shift 5
secs() { { "$1" exec "$2" "$3" "${THREADS:-2}" "${@:4}" 2>/dev/null || true; } | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for b in $benches; do
    for s in $systems; do
        o=() n=()
        for _ in $(seq "$runs"); do
            o+=("$(secs "$old" "$b" "$s" "$@")")
            n+=("$(secs "$new" "$b" "$s" "$@")")
        done
        mo=$(printf '%s\n' "${o[@]}" | median)
        mn=$(printf '%s\n' "${n[@]}" | median)
        if [ -z "$mo" ] || [ -z "$mn" ]; then
            printf '%-22s %-28s n/a\n' "$b" "$s"
            continue
        fi
        printf '%-22s %-28s old %9.4f new %9.4f new/old %.3f\n' "$b" "$s" "$mo" "$mn" \
            "$(echo "$mn / $mo" | bc -l)"
    done
done
