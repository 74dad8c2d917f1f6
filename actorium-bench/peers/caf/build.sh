#!/usr/bin/env bash
# Builds the CAF peer of actorium-bench: build/caf-bench (needs libcaf-dev 0.17 and g++).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p build
g++ -O2 -std=c++17 caf_bench.cpp -o build/caf-bench -lcaf_core -lpthread
