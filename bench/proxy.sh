#!/usr/bin/env bash
# Measures moat's policy proxy against direct loopback connections, in one
# run on one machine: keep-alive requests/s, bulk MiB/s through CONNECT,
# new-connection latency and idle memory, with ratios.
#
#   bench/proxy.sh [-d 2s] [-rounds 3] [-clients 8] [-n 2000] [-proxy HOST:PORT] [-audit=false]
#
# Flags go to bench/proxybench (see its package comment). With -proxy it
# measures an external proxy that allows 127.0.0.1 instead of an in-process one.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CGO_ENABLED=0 go build -o "$out/proxybench" ./bench/proxybench
"$out/proxybench" "$@"
