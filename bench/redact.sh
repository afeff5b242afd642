#!/usr/bin/env bash
# Measures what moat run --redact costs: a sandboxed child prints SIZE MB
# (default 100) to standard output, with and without --redact, for two
# kinds of text: the redact package's labelled corpus without its labels
# (dense with secrets and personal data, one finding per line or so) and a
# build log (no findings). Prints wall time, CPU time and MB/s for each,
# and the overhead of --redact.
#
#   bench/redact.sh [SIZE_MB] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
CGO_ENABLED=0 go build -o "$work/moat" ./cmd/moat
sed -e 's/⟦[a-z_]*://g' -e 's/⟧//g' redact/testdata/corpus.txt >"$work/one.txt"
cp "$work/one.txt" "$work/mixed.txt"
while [ "$(stat -c %s "$work/mixed.txt")" -lt $((size << 20)) ]; do
	cat "$work/mixed.txt" "$work/mixed.txt" >"$work/twice.txt"
	mv "$work/twice.txt" "$work/mixed.txt"
done
truncate -s $((size << 20)) "$work/mixed.txt"
{ yes 'ok  	github.com/acme/app/internal/server	0.412s	coverage: 81.2% of statements' || true; } | head -c $((size << 20)) >"$work/log.txt"
chmod 644 "$work"/*.txt

measure() { # label flags... : prints "label wall user+sys"
	local label=$1
	shift
	local best=""
	for _ in $(seq "$rounds"); do
		local t0 t1 cpu
		t0=$(date +%s.%N)
		cpu=$( { /usr/bin/env time -f '%U %S' "$work/moat" run --workdir "$work" "$@" >/dev/null; } 2>&1 | tail -1)
		t1=$(date +%s.%N)
		local wall
		wall=$(echo "$t1 - $t0" | bc)
		if [ -z "$best" ] || [ "$(echo "$wall < ${best%% *}" | bc)" = 1 ]; then best="$wall $cpu"; fi
	done
	set -- $best
	printf '%-28s wall %6.2fs  cpu %6.2fs  %7.1f MB/s\n' "$label" "$1" "$(echo "$2 + $3" | bc)" "$(echo "$size / $1" | bc -l)"
}

for kind in mixed log; do
	measure "$kind plain" -- cat "$work/$kind.txt"
	measure "$kind --redact" --redact -- cat "$work/$kind.txt"
done
