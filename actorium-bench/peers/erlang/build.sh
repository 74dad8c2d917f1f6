#!/bin/sh
# Compiles actorium_bench.erl into ebin/ next to this script (works from any directory).
set -eu
cd "$(dirname "$0")"
mkdir -p ebin
erlc -o ebin actorium_bench.erl actorium_remote.erl
