#!/usr/bin/env bash
# Builds actorium-bench at each commit given, in a worktree of its own (cached by commit in
# target/build-at/bins, all builds sharing target/build-at/target), and prints each binary's
# path, one a line, in the order given: the "old" arms of `scripts/alternate.sh`.
#
#   scripts/build-at.sh COMMIT...
#   OLD=$(scripts/build-at.sh main~1)
#   scripts/alternate.sh 9 "banking repeat" "old=$OLD actorium 2" \
#       "new=target/release/actorium-bench actorium 2"
#
# The first build takes a few minutes on 2 cores; a commit near one built already rebuilds
# little. Never run it beside another cargo build.
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
root=$(git rev-parse --show-toplevel)
base="$root/target/build-at"
mkdir -p "$base/bins"
tree="$base/worktree"
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
    echo "$bin"
done
