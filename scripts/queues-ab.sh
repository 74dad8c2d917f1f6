#!/usr/bin/env bash
# What the queues cost, apart from what the second worker costs: for each benchmark, runs BIN on
# 1 worker (its one queue), 1 worker with 2 queues, 1 worker with 16 queues, and N workers (16
# queues each, the default) in turn, ROUNDS times (so this machine's drift hits all four
# alike), and prints the medians and the median of each round's ratio to 1 worker.
#
#   scripts/queues-ab.sh BIN ROUNDS "bench1 bench2 .." [SYSTEM] [N]
#
# BIN is an actorium-bench binary (e.g. target/release/actorium-bench); SYSTEM defaults to
# actorium (the default executor; any actorium message-centric works), N to 2.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,10p' "$0" >&2
    exit 2
fi
bin=$1 rounds=$2 benches=$3 system=${4:-actorium} n=${5:-2}
secs() { { "$bin" exec "$1" "$system" "${@:2}" 2>/dev/null || true; } | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk 'NF {a[++k]=$1} END {if (k) print a[int((k+1)/2)]}'; }
ms() { awk -v s="$1" 'BEGIN {printf "%.2f", s * 1000}'; }
div() { awk -v x="$1" -v y="$2" 'BEGIN {print x / y}'; }
# A column's cell: the median time of its runs (list $1) and the median of its ratios ($2).
cell() { printf '%s ms (%.2f×)' "$(ms "$(printf '%s\n' $1 | median)")" "$(printf '%s\n' $2 | median)"; }

printf '| benchmark | 1 w | 1 w, 2 queues | 1 w, 16 queues | %s w |\n' "$n"
printf '|---|---|---|---|---|\n'
for b in $benches; do
    a="" q2="" q16="" w="" r2="" r16="" rw=""
    for _ in $(seq "$rounds"); do
        t1=$(secs "$b" 1)
        t2=$(secs "$b" 1 --queues-per-worker 2)
        t16=$(secs "$b" 1 --queues-per-worker 16)
        tn=$(secs "$b" "$n")
        # A run that failed (no time) leaves its round out of the ratios.
        if [ -n "$t1" ] && [ -n "$t2" ] && [ -n "$t16" ] && [ -n "$tn" ]; then
            a+="$t1 " q2+="$t2 " q16+="$t16 " w+="$tn "
            r2+="$(div "$t2" "$t1") " r16+="$(div "$t16" "$t1") " rw+="$(div "$tn" "$t1") "
        fi
    done
    if [ -z "$a" ]; then
        printf '| %s | failed | | | |\n' "$b"
        continue
    fi
    printf '| %s | %s ms | %s | %s | %s |\n' "$b" "$(ms "$(printf '%s\n' $a | median)")" \
        "$(cell "$q2" "$r2")" "$(cell "$q16" "$r16")" "$(cell "$w" "$rw")"
done
