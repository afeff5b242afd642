#!/usr/bin/env bash
# Compares the start-up cost of `moat run` with bubblewrap and a bare exec,
# in one run on one machine, and prints medians and ratios. The commands of
# each comparison run in turns (bench/interleave.py), so that a machine
# whose speed drifts slows them alike.
#
#   bench/startup.sh [RUNS]
#
# As root it runs everything as the unprivileged test user (MOAT_TEST_USER,
# default moattest), which is how moat is normally used; bubblewrap and moat
# then both build user namespaces. It ends with moat's own per-layer trace.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200}"
for tool in bwrap python3; do
	command -v "$tool" >/dev/null || { echo "startup.sh: $tool is missing (apt-get install bubblewrap python3)" >&2; exit 1; }
done

out=$(mktemp -d /var/tmp/moat-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
chmod 755 "$out"
mkdir -m 777 "$out/res"
CGO_ENABLED=0 go build -o "$out/moat" ./cmd/moat
# The Landlock-only floor: go-landlock restricts, then exec (bench/landlockfloor).
CGO_ENABLED=0 go build -o "$out/floor" ./bench/landlockfloor
cp bench/interleave.py "$out/"

as_user=()
if [ "$(id -u)" = 0 ]; then
	user="${MOAT_TEST_USER:-moattest}"
	id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
	as_user=(setpriv --reuid="$user" --regid="$user" --init-groups env HOME="$(getent passwd "$user" | cut -d: -f6)")
fi

bwrap_cmd="bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent"
run_bench() { # name, then the commands, run in turns (bench/interleave.py); results go to a file the user may write
	local name=$1
	shift
	(cd "$out" && "${as_user[@]}" python3 "$out/interleave.py" "$out/res/$name.json" "$RUNS" 10 "$@")
}
run_bench true "/bin/true" "$bwrap_cmd /bin/true" "$out/floor /bin/true" "$out/moat run -- /bin/true" "$out/moat run --isolation strict -- /bin/true"
run_bench python "python3 -c pass" "$bwrap_cmd python3 -c pass" "$out/floor python3 -c pass" "$out/moat run -- python3 -c pass" "$out/moat run --isolation strict -- python3 -c pass"
# moat python with its cached venv (built on the host by the warm-up, then reused) against bare python3.
run_bench pyvenv "python3 -c pass" "$out/moat python -c pass"

# The same with a crowded shared temp: 1,000 world-readable files in /tmp
# (removed afterwards), which the default level shows one by one and strict
# does not show at all.
crowd=$(mktemp -d /tmp/bench-crowd.XXXXXX)
rmdir "$crowd"
trap 'rm -rf "$out"; rm -f "$crowd"-*' EXIT
for i in $(seq 1000); do : >"$crowd-$i"; chmod 644 "$crowd-$i"; done
run_bench crowded "$out/moat run --isolation strict -- /bin/true" "$out/moat run -- /bin/true"
rm -f "$crowd"-*

python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
res = json.load(open(f"{out}/res/crowded.json"))["results"]
strict, default = (statistics.median(r["times"]) * 1000 for r in res)
print(f"\n1,000 readable files in /tmp: strict {strict:.2f} ms, default {default:.2f} ms, default/strict {default/strict:.2f}x")
for name in ("true", "python"):
    res = json.load(open(f"{out}/res/{name}.json"))["results"]
    med = {r["command"]: statistics.median(r["times"]) * 1000 for r in res}
    bare, bw, floor, mo, strict = (r["command"] for r in res)
    print(f"\n{name}: median ms over {len(res[0]['times'])} runs (moat run's default level is 'default')")
    for cmd in (bare, bw, floor, mo, strict):
        print(f"  {med[cmd]:7.2f}  {cmd}")
    print(f"  moat/bare {med[mo]/med[bare]:.2f}x   moat/bwrap {med[mo]/med[bw]:.2f}x   strict/bwrap {med[strict]/med[bw]:.2f}x   "
          f"moat/landlock-floor {med[mo]/med[floor]:.2f}x   strict/landlock-floor {med[strict]/med[floor]:.2f}x   bwrap/bare {med[bw]/med[bare]:.2f}x")
res = json.load(open(f"{out}/res/pyvenv.json"))["results"]
bare, mp = (statistics.median(r["times"]) * 1000 for r in res)
print(f"\nmoat python -c pass {mp:.2f} ms, bare python3 -c pass {bare:.2f} ms: {mp/bare:.2f}x (target 1.25x)")
PY

echo
echo "per-layer cost of one 'moat run -- /bin/true' (host and helper traces, 5 runs):"
for _ in 1 2 3 4 5; do
	(cd "$out" && "${as_user[@]}" env MOAT_TRACE=1 "$out/moat" run -- /bin/true 2>&1 >/dev/null | grep 'moat: trace' | sed 's/^moat: trace: /  /')
	echo
done
