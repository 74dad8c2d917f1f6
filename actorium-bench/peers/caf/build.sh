#!/usr/bin/env bash
# Builds the CAF peers of actorium-bench: build/caf-bench (the suite's workloads) and
# build/caf-remote (the remote benchmark's middleman peer). Needs libcaf-dev 0.17 and g++.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p build
g++ -O2 -std=c++17 caf_bench.cpp -o build/caf-bench -lcaf_core -lpthread
g++ -O2 -std=c++17 caf_remote.cpp -o build/caf-remote -lcaf_io -lcaf_core -lpthread
