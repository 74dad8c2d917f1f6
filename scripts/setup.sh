#!/usr/bin/env bash
# Installs what actorium's build and tests need on a fresh machine. Idempotent.
# The Rust toolchain (cargo, rustc, rustfmt, clippy) comes with the machine image; crates come
# from crates.io through cargo. Benchmark peers (CAF, Erlang) get their own script with the
# benchmark suite.
set -euo pipefail
if ! command -v cargo >/dev/null; then
    echo "setup: cargo not found; install a Rust toolchain (rustup) first" >&2
    exit 1
fi
cargo --version
cargo fetch --locked 2>/dev/null || cargo fetch
