#!/usr/bin/env bash
# Parallelism that pays for itself, before and after a change: for each benchmark, runs OLD on
# 1 worker, OLD on N, NEW on 1, NEW on N in turn, ROUNDS times (so this machine's drift hits
# all four alike), and prints the medians and each build's N-worker/1-worker ratio.
#
#   scripts/sweep-ab.sh OLD_BIN NEW_BIN ROUNDS "bench1 bench2 .." [SYSTEM] [N]
#
# SYSTEM defaults to actorium (the default executor), N to 2.
set -euo pipefail
if [ $# -lt 4 ]; then
    sed -n '2,8p' "$0" >&2
    exit 2
fi
old=$1 new=$2 rounds=$3 benches=$4 system=${5:-actorium} n=${6:-2}
secs() { { "$1" exec "$2" "$system" "$3" 2>/dev/null || true; } | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'; }
median() { sort -g | awk 'NF {a[++k]=$1} END {if (k) print a[int((k+1)/2)]}'; }
ms() { awk -v s="$1" 'BEGIN {printf "%.1f", s * 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }

printf '| benchmark | old, 1 w | old, %s w | old %s w / 1 w | new, 1 w | new, %s w | new %s w / 1 w |\n' "$n" "$n" "$n" "$n"
printf '|---|---|---|---|---|---|---|\n'
for b in $benches; do
    o1="" on="" n1="" nn=""
    for _ in $(seq "$rounds"); do
        o1+="$(secs "$old" "$b" 1) "
        on+="$(secs "$old" "$b" "$n") "
        n1+="$(secs "$new" "$b" 1) "
        nn+="$(secs "$new" "$b" "$n") "
    done
    mo1=$(printf '%s\n' $o1 | median) mon=$(printf '%s\n' $on | median)
    mn1=$(printf '%s\n' $n1 | median) mnn=$(printf '%s\n' $nn | median)
    printf '| %s | %s ms | %s ms | %s | %s ms | %s ms | %s |\n' "$b" \
        "$(ms "$mo1")" "$(ms "$mon")" "$(ratio "$mon" "$mo1")" \
        "$(ms "$mn1")" "$(ms "$mnn")" "$(ratio "$mnn" "$mn1")"
done
