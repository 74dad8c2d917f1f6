#!/usr/bin/env bash
# Installs the benchmark peers from Debian's packages: CAF 0.17 (libcaf-dev) and Erlang/OTP
# (erlang-nox). Idempotent; needs root (apt-get). The Rust peers (actix, ractor, kameo) are
# crates and need nothing here.
set -euo pipefail
need=()
dpkg -s libcaf-dev >/dev/null 2>&1 || need+=(libcaf-dev)
command -v erl >/dev/null 2>&1 || need+=(erlang-nox)
command -v g++ >/dev/null 2>&1 || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}"
fi
echo "peers: CAF $(dpkg-query -W -f='${Version}' libcaf-dev 2>/dev/null || echo missing), Erlang $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]), halt().' 2>/dev/null || echo missing)"
