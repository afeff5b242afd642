#!/usr/bin/env bash
# Compares the start-up cost of `moat run` with bubblewrap and a bare exec,
# in one run on one machine, and prints medians and ratios.
#
#   bench/startup.sh [RUNS]
#
# As root it runs everything as the unprivileged test user (MOAT_TEST_USER,
# default moattest), which is how moat is normally used; bubblewrap and moat
# then both build user namespaces. It ends with moat's own per-layer trace.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-200}"
for tool in hyperfine bwrap python3; do
	command -v "$tool" >/dev/null || { echo "startup.sh: $tool is missing (apt-get install hyperfine bubblewrap python3)" >&2; exit 1; }
done

out=$(mktemp -d /var/tmp/moat-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
chmod 755 "$out"
mkdir -m 777 "$out/res"
CGO_ENABLED=0 go build -o "$out/moat" ./cmd/moat

as_user=()
if [ "$(id -u)" = 0 ]; then
	user="${MOAT_TEST_USER:-moattest}"
	id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
	as_user=(setpriv --reuid="$user" --regid="$user" --init-groups env HOME="$(getent passwd "$user" | cut -d: -f6)")
fi

bwrap_cmd="bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent"
run_bench() { # name, then the commands; results go to a file the user may write
	local name=$1
	shift
	(cd "$out" && "${as_user[@]}" hyperfine -N --warmup 20 --runs "$RUNS" --export-json "$out/res/$name.json" "$@" >/dev/null)
}
run_bench true "/bin/true" "$bwrap_cmd /bin/true" "$out/moat run -- /bin/true" "$out/moat run --isolation strict -- /bin/true"
run_bench python "python3 -c pass" "$bwrap_cmd python3 -c pass" "$out/moat run -- python3 -c pass" "$out/moat run --isolation strict -- python3 -c pass"

python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
for name in ("true", "python"):
    res = json.load(open(f"{out}/res/{name}.json"))["results"]
    med = {r["command"]: statistics.median(r["times"]) * 1000 for r in res}
    bare, bw, mo, strict = (r["command"] for r in res)
    print(f"\n{name}: median ms over {len(res[0]['times'])} runs (moat run's default level is 'default')")
    for cmd in (bare, bw, mo, strict):
        print(f"  {med[cmd]:7.2f}  {cmd}")
    print(f"  moat/bare {med[mo]/med[bare]:.2f}x   moat/bwrap {med[mo]/med[bw]:.2f}x   strict/bwrap {med[strict]/med[bw]:.2f}x   bwrap/bare {med[bw]/med[bare]:.2f}x")
PY

echo
echo "per-layer cost of one 'moat run -- /bin/true' (helper trace, 5 runs):"
for _ in 1 2 3 4 5; do
	(cd "$out" && "${as_user[@]}" env MOAT_TRACE=1 "$out/moat" run -- /bin/true 2>&1 >/dev/null | grep 'moat: trace' | sed 's/^moat: trace: /  /')
done
