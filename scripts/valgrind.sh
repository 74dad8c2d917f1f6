#!/usr/bin/env bash
# valgrind memcheck over actorium's tests: no invalid read or write, no use of
# uninitialised memory, and no leak that valgrind calls "definitely lost" (memory nothing
# points to any more); "indirectly" and "possibly lost" are reported too (threads a test
# leaves behind on purpose, a failed policy's workers, hold such blocks). Each test binary runs
# on one test thread; the random programs run ACTORIUM_PROGRAMS of them (default here 8: each
# is 24 systems). `lib` is the crate's own unit tests (the unsafe core's: copy queue, deque,
# swap, mailbox, oneshot, ...).
#
#   bash scripts/valgrind.sh [test-target ...]     # default: the list below
#
# Installs Debian's valgrind if missing. Prints one summary line per target and exits 1 if
# any target had an error.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq valgrind
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    # The semantics tests; the stress tests (delivery, resize, leaks, reclaim)
    # run too long under valgrind (each thread serialised, spinning workers included).
    targets=(lib random_programs shutdown lifecycle ask supervision timers monitor spawn_with
        robustness centric forkjoin outbox)
fi
export ACTORIUM_PROGRAMS=${ACTORIUM_PROGRAMS:-8}
# Test binaries, built once (debug: what valgrind reads best).
bins=$(cargo test -p actorium --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        if m["target"]["kind"] == ["test"]:
            print(m["target"]["name"], m["executable"])
        elif m["target"]["kind"] == ["lib"] and m["target"]["name"] == "actorium":
            print("lib", m["executable"])
')
status=0
mkdir -p target/valgrind
for t in "${targets[@]}"; do
    bin=$(echo "$bins" | awk -v t="$t" '$1 == t { print $2 }')
    if [ -z "$bin" ]; then
        echo "valgrind: no test target \`$t\`" >&2
        status=1
        continue
    fi
    log=target/valgrind/$t.log
    if valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite --errors-for-leak-kinds=definite \
        --fair-sched=yes "$bin" --test-threads=1 >"$log" 2>&1; then
        result=clean
    else
        result="FAILED (exit $?)"
        status=1
    fi
    errors=$(grep -m1 'ERROR SUMMARY' "$log" | sed 's/.*ERROR SUMMARY: //')
    lost=$(grep -m1 'definitely lost:' "$log" | sed 's/.*definitely lost: //')
    indirect=$(grep -m1 'indirectly lost:' "$log" | sed 's/.*indirectly lost: //')
    possible=$(grep -m1 'possibly lost:' "$log" | sed 's/.*possibly lost: //')
    tests=$(grep -E '^test result' "$log" | tail -1)
    echo "$t: $result; errors: ${errors:-?}; definitely lost: ${lost:-0 bytes};" \
        "indirectly lost: ${indirect:-0 bytes}; possibly lost: ${possible:-0 bytes}; $tests"
done
exit $status
