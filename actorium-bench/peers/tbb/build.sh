#!/usr/bin/env bash
# Builds the TBB peer of actorium-bench: build/tbb-bench (needs libtbb-dev and g++).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p build
g++ -O3 -march=native -std=c++17 tbb_bench.cpp -o build/tbb-bench -ltbb -lpthread
