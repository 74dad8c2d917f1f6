#!/usr/bin/env bash
# Thread sweep of the benchmark suite with a prebuilt actorium-bench binary, for a many-core
# machine that has no Rust toolchain. Only the Rust systems run there (the binary holds
# actorium and every Rust peer); CAF, Erlang, TBB and Java need their own installs.
#
#   scripts/device-sweep.sh BIN OUT_DIR ["1 2 4 8 16"] [RUNS]
#
# Three phases, most wanted first, each step with its own time limit (STEP_S, default 150 s):
#   actors  the actor group: actorium's default and actor-centric work-stealing systems at every
#           thread count;
#   peers   the actor group's Rust peers (tokio-mpsc, ractor, kameo, actix-1; PEERS to change)
#           at PEER_THREADS (default: the largest count), one run each;
#   fj      the fork/join group: actorium (both executors), rayon, chili at FJ_THREADS (default:
#           every count), and the sequential baseline at 1.
# SIZES is passed to every step (default `--full`: the full sizes; empty for the standard).
# Writes OUT_DIR/NAME-T.json (every record of phase NAME at T threads) and logs, and packs
# OUT_DIR into $TAR (default OUT_DIR/sweep.tar.gz) after every step, so a run cut short still
# returns the steps it finished (a step killed by its limit writes no JSON: size STEP_S so
# that each finishes). `actorium-bench threads-table OUT_DIR/*.json` makes the tables.
set -uo pipefail
bin=$1 out=$2 threads=${3:-"1 2 4 8 16"} runs=${4:-3}
step=${STEP_S:-150}
sizes=${SIZES---full}
tarball=${TAR:-$out/sweep.tar.gz}
mkdir -p "$out"
{
    echo "nproc: $(nproc)"
    grep -m1 'model name' /proc/cpuinfo
    uname -a
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

pack() { tar -C "$out" -czf "$tarball.tmp" --exclude '*.tar.gz*' . && mv "$tarball.tmp" "$tarball"; }

fj=fib,quicksort,nqueens,matmul,tree-sum-small,tree-sum-big
actors=static-send,dynamic-send,executor,repeat,balance-one,balance-multi,matrix,ping-pong,counting
actors=$actors,fork-join-throughput,fork-join-creation,thread-ring,chameneos,big,logistic-map
actors=$actors,banking,dictionary,bounded-buffer,sleeping-barber,cigarette-smokers,pipeline-lanes
actors=$actors,pipeline-chain

# One step: benchmarks ONLY on SYSTEMS at T threads, R runs each, under its own time limit.
sweep() {
    local name=$1 only=$2 systems=$3 t=$4 r=$5 start=$SECONDS
    # shellcheck disable=SC2086 # SIZES is a list of flags
    timeout "$step" "$bin" $sizes --only "$only" --systems "$systems" --threads "$t" \
        --runs "$r" --timeout 30 --json "$out/$name-$t.json" --out "$out/$name-$t" \
        >"$out/$name-$t.log" 2>&1
    echo "$name on $t threads: exit $?, $((SECONDS - start)) s"
    pack
}

largest=$(echo "$threads" | tr ' ' '\n' | sort -n | tail -1)
for t in $threads; do
    sweep actors "$actors" actorium,actorium-policy-stealing "$t" "$runs"
done
sweep peers "$actors" "${PEERS:-tokio-mpsc,ractor,kameo,actix-1}" "${PEER_THREADS:-$largest}" 1
for t in ${FJ_THREADS:-$threads}; do
    s=actorium,actorium-policy-stealing,rayon,chili
    [ "$t" = 1 ] && s=$s,sequential
    sweep fj "$fj" "$s" "$t" "$runs"
done
