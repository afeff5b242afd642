#!/usr/bin/env bash
# Measures what moat adds to syscall-heavy work: a fork+exec loop (every
# exec goes to the sandbox's supervisor, which looks at the file and lets
# the kernel go on), a stat loop and an open loop (which only the seccomp
# filter sees). Each workload runs bare, under this tree's moat and, when
# MOAT_BEFORE names an older moat binary, under that one, in turns
# (bench/interleave.py), and the medians and ratios are printed.
#
#   MOAT_BEFORE=/path/to/older/moat bench/syscalls.sh [ROUNDS [WORKLOAD...]]
#
# WORKLOAD is forkexec, stat or open (default: all three). Besides the
# medians it prints the median of the per-round ratios moat/before, which a
# machine whose load drifts between rounds disturbs least.
#
# Build the older binary from another checkout, e.g.
#   git worktree add /var/tmp/moat-old REF && (cd /var/tmp/moat-old && go build -o /var/tmp/moat-old.bin ./cmd/moat)
#
# As root it runs everything as the unprivileged test user (MOAT_TEST_USER,
# default moattest), as startup.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-15}"
shift || true
WORKLOADS=(forkexec stat open)
[ $# -eq 0 ] || WORKLOADS=("$@")
command -v python3 >/dev/null || { echo "syscalls.sh: python3 is missing" >&2; exit 1; }

out=$(mktemp -d /var/tmp/moat-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
chmod 755 "$out"
mkdir -m 777 "$out/res"
CGO_ENABLED=0 go build -o "$out/moat" ./cmd/moat
cp bench/interleave.py "$out/"
before=()
if [ -n "${MOAT_BEFORE:-}" ]; then
	cp "$MOAT_BEFORE" "$out/moat-before"
	chmod 755 "$out/moat-before"
	before=("$out/moat-before")
fi

as_user=()
if [ "$(id -u)" = 0 ]; then
	user="${MOAT_TEST_USER:-moattest}"
	id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
	as_user=(setpriv --reuid="$user" --regid="$user" --init-groups env HOME="$(getent passwd "$user" | cut -d: -f6)")
fi

# The workloads, each about a second bare.
declare -A work=(
	[forkexec]="sh -c 'i=0; while [ \$i -lt 2000 ]; do /bin/true; i=\$((i+1)); done'"
	[stat]="python3 -c 'import os
for _ in range(300000): os.stat(\"/etc/passwd\")'"
	[open]="python3 -c 'import os
for _ in range(150000): os.close(os.open(\"/etc/passwd\", os.O_RDONLY))'"
)
for name in "${WORKLOADS[@]}"; do
	cmds=("${work[$name]}" "$out/moat run -- ${work[$name]}")
	for b in "${before[@]}"; do
		cmds+=("$b run -- ${work[$name]}")
	done
	(cd "$out" && "${as_user[@]}" python3 "$out/interleave.py" "$out/res/$name.json" "$ROUNDS" 2 "${cmds[@]}")
done

python3 - "$out" "${WORKLOADS[@]}" <<'PY'
import json, statistics, sys
out = sys.argv[1]
for name in sys.argv[2:]:
    res = json.load(open(f"{out}/res/{name}.json"))["results"]
    med = [statistics.median(r["times"]) * 1000 for r in res]
    line = f"{name:9s} median ms over {len(res[0]['times'])} rounds: bare {med[0]:8.1f}  moat {med[1]:8.1f} ({med[1]/med[0]:.3f}x bare)"
    if len(med) > 2:
        paired = statistics.median(a / b for a, b in zip(res[1]["times"], res[2]["times"]))
        line += f"  before {med[2]:8.1f}  moat/before {med[1]/med[2]:.3f}x, per round {paired:.3f}x (target at most 1.05x)"
    print(line)
PY
