#!/usr/bin/env bash
# Builds the remote benchmark's ractor_cluster peer: build/ractor-cluster-remote.
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --quiet --target-dir build/target
mkdir -p build
cp --remove-destination build/target/release/ractor-cluster-remote build/ractor-cluster-remote
