#!/usr/bin/env bash
# Installs the benchmark peers from Debian's packages: CAF 0.17 (libcaf-dev), Erlang/OTP
# (erlang-nox), Intel TBB (libtbb-dev) and a JDK for Java's ForkJoinPool (default-jdk-headless,
# unless javac is there already). Idempotent; needs root (apt-get). The Rust peers (actix,
# ractor, kameo, rayon, chili) are crates and need nothing here.
set -euo pipefail
need=()
dpkg -s libcaf-dev >/dev/null 2>&1 || need+=(libcaf-dev)
command -v erl >/dev/null 2>&1 || need+=(erlang-nox)
command -v g++ >/dev/null 2>&1 || need+=(g++)
dpkg -s libtbb-dev >/dev/null 2>&1 || need+=(libtbb-dev)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}"
fi
echo "peers: CAF $(dpkg-query -W -f='${Version}' libcaf-dev 2>/dev/null || echo missing), Erlang $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]), halt().' 2>/dev/null || echo missing), TBB $(dpkg-query -W -f='${Version}' libtbb-dev 2>/dev/null || echo missing), $(javac -version 2>&1 || echo 'javac missing')"
