#!/usr/bin/env bash
# Compares a second `go build` and `go test` of a small module in moat, with
# the caches kept (the default with --workdir), against the same commands on
# the host, in turns (bench/interleave.py), and prints medians and ratios.
# One round of --fresh-home shows what a throwaway home costs.
#
#   bench/caches.sh [ROUNDS]
#
# As root it runs everything as the unprivileged test user (MOAT_TEST_USER,
# default moattest). The stores go to a temporary XDG_CACHE_HOME.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-10}"
out=$(mktemp -d /var/tmp/moat-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
chmod 755 "$out"
go build -o "$out/moat" ./cmd/moat
cp bench/interleave.py "$out/"
cat >"$out/run.sh" <<'SCRIPT'
set -euo pipefail
out=$1 rounds=$2
export XDG_CACHE_HOME=$out/cache XDG_STATE_HOME=$out/state
w=$out/proj
mkdir -p "$w" && cd "$w"
printf 'module hello\n\ngo 1.22\n' >go.mod
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(g()) }\n\nfunc g() string { return "hi" }\n' >main.go
printf 'package main\n\nimport "testing"\n\nfunc TestG(t *testing.T) {\n\tif g() != "hi" {\n\t\tt.Fatal()\n\t}\n}\n' >main_test.go
m=$out/moat
# Host: a fresh output each time, as the sandbox's $TMPDIR is (go build
# skips the link when the output is up to date).
host_build="sh -c 'o=\$(mktemp -d $out/o.XXXX) && go build -o \$o/x . && rm -rf \$o'"
python3 "$out/interleave.py" "$out/r1.json" "$rounds" 1 \
	"$host_build" "$m run --workdir $w -- sh -c 'go build -o \$TMPDIR/x .'" \
	"go test -count=1 ." "$m run --build --workdir $w -- go test -count=1 ." \
	"go test ." "$m run --build --workdir $w -- go test ."
python3 "$out/interleave.py" "$out/r2.json" 1 0 \
	"$m run --fresh-home --workdir $w -- sh -c 'go build -o \$TMPDIR/x .'" \
	"$m run --fresh-home --build --workdir $w -- go test -count=1 ."
SCRIPT
if [ "$(id -u)" = 0 ]; then
	user="${MOAT_TEST_USER:-moattest}"
	chown -R "$user" "$out"
	setpriv --reuid="$user" --regid="$user" --init-groups env -i PATH="$PATH" HOME="$(getent passwd "$user" | cut -d: -f6)" bash "$out/run.sh" "$out" "$ROUNDS"
else
	bash "$out/run.sh" "$out" "$ROUNDS"
fi
python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
r1 = json.load(open(out + "/r1.json"))["results"]
for host, moat in zip(r1[0::2], r1[1::2]):
    h, m = statistics.median(host["times"]), statistics.median(moat["times"])
    print(f"{m:7.3f}s moat  {h:7.3f}s host  {m / h:5.2f}x  {moat['command'].split(' -- ', 1)[1]}")
for r in json.load(open(out + "/r2.json"))["results"]:
    print(f"{r['times'][0]:7.3f}s moat --fresh-home (one run)  {r['command'].split(' -- ', 1)[1]}")
PY
