#!/usr/bin/env bash
# Alternating runs of several "arms" (a build, a system, a worker count, settings) on the same
# workloads: each round runs every arm once, in turn, so this machine's drift (2-3x within
# minutes) hits them alike. Prints, per workload, each arm's median timed region and the
# median of its per-round ratio to the first arm (the one number to quote).
#
#   scripts/alternate.sh ROUNDS "bench1 bench2 .." "LABEL=BIN SYSTEM THREADS [k=v ..]" ...
#
# An arm is a label, an actorium-bench binary, a system, a worker count and optional workload
# parameters or hidden settings, run as `BIN exec BENCH SYSTEM THREADS [k=v ..]`. Examples:
#
#   # old build against new, 2 workers (build OLD in a `git worktree` with its own --target-dir)
#   scripts/alternate.sh 9 "banking repeat" \
#       "old=/tmp/old-target/release/actorium-bench actorium 2" \
#       "new=target/release/actorium-bench actorium 2"
#   # 1 worker against 2 against 16 (oversubscribed) of one build
#   B=target/release/actorium-bench
#   scripts/alternate.sh 7 "thread-ring" "1w=$B actorium 1" \
#       "2w=$B actorium 2" "16w=$B actorium 16"
#   # actorium against a peer
#   scripts/alternate.sh 7 "fib" "act=$B actorium 2" "rayon=$B rayon 2"
#
# A run that fails (no `seconds=` in its output) counts as missing; an arm with no run left
# prints n/a.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,22p' "$0" >&2
    exit 2
fi
rounds=$1 benches=$2
shift 2
arms=("$@")
median() { sort -g | awk '{a[NR]=$1} END{ if (NR) print a[int((NR+1)/2)] }'; }
run() {
    local spec=$1 bench=$2
    local cmd=${spec#*=}
    # shellcheck disable=SC2086
    set -- $cmd
    local bin=$1 system=$2 threads=$3
    shift 3
    { "$bin" exec "$bench" "$system" "$threads" "$@" 2>/dev/null || true; } |
        sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'
}
printf '%-22s' "workload"
for a in "${arms[@]}"; do printf ' %12s' "${a%%=*}"; done
for a in "${arms[@]:1}"; do printf ' %10s' "${a%%=*}/${arms[0]%%=*}"; done
echo
for b in $benches; do
    declare -A t=()
    declare -A r=()
    for i in $(seq "$rounds"); do
        for k in "${!arms[@]}"; do
            t[$k]+="$(run "${arms[$k]}" "$b") "
        done
        # This round's ratios to the first arm.
        first=$(echo "${t[0]}" | awk '{print $NF}')
        for k in "${!arms[@]}"; do
            [ "$k" -eq 0 ] && continue
            this=$(echo "${t[$k]}" | awk '{print $NF}')
            if [ -n "$first" ] && [ -n "$this" ] && [ "$(echo "${t[0]}" | wc -w)" -eq "$i" ] &&
                [ "$(echo "${t[$k]}" | wc -w)" -eq "$i" ]; then
                r[$k]+="$(echo "$this / $first" | bc -l) "
            fi
        done
    done
    printf '%-22s' "$b"
    for k in "${!arms[@]}"; do
        m=$(echo "${t[$k]}" | tr ' ' '\n' | grep . | median || true)
        if [ -n "$m" ]; then printf ' %12.5f' "$m"; else printf ' %12s' n/a; fi
    done
    for k in "${!arms[@]}"; do
        [ "$k" -eq 0 ] && continue
        m=$(echo "${r[$k]:-}" | tr ' ' '\n' | grep . | median || true)
        if [ -n "$m" ]; then printf ' %10.3f' "$m"; else printf ' %10s' n/a; fi
    done
    echo
    unset t r
done
