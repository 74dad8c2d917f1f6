#!/usr/bin/env bash
# Writes the TLS test certificates of actorium's remote tests (actorium/tests/tls/): a CA and a
# node certificate it signs (for 127.0.0.1 and localhost, usable as server and as client, for
# mutual TLS), a guest certificate the same CA signs under another name (for access control
# by certificate name), and a second CA with a node certificate of its own (a stranger that
# must be refused). Valid for 100 years. FOR TESTS ONLY: the private keys are public.
set -euo pipefail
out="$(cd "$(dirname "$0")/.." && pwd)/actorium/tests/tls"
mkdir -p "$out"
cd "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
days=36500
for who in ca other-ca; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days $days \
        -subj "/CN=actorium test $who" -keyout "$tmp/$who.key" -out "$who.pem" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
done
cat > "$tmp/ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=IP:127.0.0.1,DNS:localhost
EXT
for pair in "node ca" "guest ca" "other other-ca"; do
    set -- $pair
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=actorium test $1" \
        -keyout "$tmp/$1.key" -out "$tmp/$1.csr" 2>/dev/null
    openssl x509 -req -in "$tmp/$1.csr" -CA "$2.pem" -CAkey "$tmp/$2.key" -CAcreateserial \
        -days $days -extfile "$tmp/ext" -out "$1.pem" 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in "$tmp/$1.key" -out "$1.key"
done
rm -f ./*.srl
ls "$out"
