#!/usr/bin/env bash
# Builds the remote benchmark's kameo peer: build/kameo-remote (kameo's `remote` feature
# brings libp2p: the first build takes several minutes).
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --quiet --target-dir build/target
cp --remove-destination build/target/release/kameo-remote build/kameo-remote
