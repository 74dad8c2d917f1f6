#!/usr/bin/env bash
# Builds the Java ForkJoinPool peer of actorium-bench: build/ForkJoinBench.class (needs a JDK).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p build
javac -d build ForkJoinBench.java
