#!/usr/bin/env bash
# Alternating runs of fork/join workloads on 2 threads: each system in turn, RUNS times, then
# the median per system (the machine's drift hits all of them alike).
#
#   scripts/fj-alternate.sh BIN RUNS bench... # BIN: target/release/actorium-bench
#   SYSTEMS="actorium chili" scripts/fj-alternate.sh BIN 21 tree-sum-big
set -euo pipefail
bin=$1 runs=$2
shift 2
systems=${SYSTEMS:-actorium actorium-policy-stealing rayon chili}
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
for b in "$@"; do
    declare -A t=()
    for _ in $(seq "$runs"); do
        for s in $systems; do
            v=$("$bin" exec "$b" "$s" "${THREADS:-2}" 2>/dev/null | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p')
            t[$s]+="$v "
        done
    done
    line="$b"
    for s in $systems; do
        # shellcheck disable=SC2086
        m=$(printf '%s\n' ${t[$s]} | median)
        line+="  $s=$(printf '%.2f' "$(echo "$m*1000" | bc -l)")ms"
    done
    echo "$line"
    unset t
done
