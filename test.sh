#!/usr/bin/env bash
# Runs moat's whole test suite: vet for every OS, unit and integration tests,
# the escape battery, which attacks the sandbox for real as an unprivileged
# user, and the workloads, real toolchains (Go, Python, C, npm) building
# real projects in sandboxes, offline, as that user too.
#
# Run as root (CI does), it first installs what the tests need from apt and
# creates that user. Run as an ordinary user, it expects those tools to be
# there and runs the escape battery and the workloads as yourself.
set -euo pipefail
cd "$(dirname "$0")"

# Work from any PATH (sudo's secure_path, cron, a minimal CI shell): add the
# system directories and Go's official install place where missing.
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin /usr/local/go/bin; do
	case ":$PATH:" in
	*":$d:"*) ;;
	*) if [ -d "$d" ]; then PATH="$PATH:$d"; fi ;;
	esac
done
export PATH

TEST_USER="${MOAT_TEST_USER:-moattest}"
PACKAGES=(bubblewrap hyperfine gcc libc6-dev make git python3 python3-pip python3-venv python3-numpy python3-pandas python3-matplotlib python3-yaml curl strace util-linux iproute2 socat procps)
# npm comes with NodeSource's nodejs; Debian packages it on its own.
command -v npm >/dev/null || PACKAGES+=(npm)

step() { printf '\n== %s\n' "$*"; }
die() { echo "test.sh: $*" >&2; exit 1; }

# Cleanups run at exit, in order; each step adds its own.
cleanups=()
cleanup() { for c in "${cleanups[@]}"; do eval "$c" || true; done; }
trap cleanup EXIT

if [ "$(id -u)" = 0 ]; then
	# Prerequisites of the setup itself, checked before anything changes.
	for tool in apt-get dpkg-query useradd getent install setpriv mknod mktemp; do
		command -v "$tool" >/dev/null || die "$tool is missing (PATH=$PATH); it is needed to install test dependencies as root"
	done
	missing=()
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		step "installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
	if ! id "$TEST_USER" >/dev/null 2>&1; then
		step "creating test user $TEST_USER"
		useradd --create-home --shell /bin/bash "$TEST_USER"
	fi
	# The user's runtime directory, where a session bus or an agent socket
	# would live: the battery plants one there and checks it is unreachable.
	uid=$(id -u "$TEST_USER")
	install -d -o "$TEST_USER" -g "$TEST_USER" -m 0700 "/run/user/$uid"
fi
for tool in go gcc cc make git python3 curl strace setpriv node npm; do
	command -v "$tool" >/dev/null || die "$tool is missing (PATH=$PATH); run as root to install test dependencies"
done
/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null || die "/usr/bin/python3 has no venv/ensurepip module; run as root to install python3-venv"

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi

step "go vet (linux, darwin, windows)"
for os in linux darwin windows; do
	GOOS=$os CGO_ENABLED=0 go vet ./...
done

step "unit and integration tests"
go test -count=1 -timeout 30m $(go list ./... | grep -v -e /test/escape -e /test/workloads)

step "escape battery as an unprivileged user"
if [ "$(id -u)" = 0 ]; then
	bindir=$(mktemp -d /var/tmp/moat-escape.XXXXXX)
	# Fake GPU device nodes (each one is /dev/null: char 1:3), for the
	# battery to check they are denied without AllowGPU and open with it.
	# Only nodes this script creates are removed afterwards.
	fake_gpu=()
	mkdir -p /dev/dri
	for node in /dev/nvidia0 /dev/nvidiactl /dev/dri/renderD128; do
		if [ ! -e "$node" ]; then
			mknod -m 0666 "$node" c 1 3
			fake_gpu+=("$node")
		fi
	done
	cleanups+=('rm -rf "$bindir"; for n in "${fake_gpu[@]}"; do rm -f "$n"; done; rmdir /dev/dri 2>/dev/null || true')
	chmod 755 "$bindir"
	go test -c -o "$bindir/escape.test" ./test/escape
	chmod 755 "$bindir/escape.test"
	user_home=$(getent passwd "$TEST_USER" | cut -d: -f6)
	(cd "$bindir" && setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups \
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$user_home" USER="$TEST_USER" LANG=C.UTF-8 \
		./escape.test -test.v -test.count=1 -test.timeout 20m) | tee "$bindir/escape.log" |
		grep -E '^(=== RUN|--- (PASS|FAIL|SKIP)|PASS|FAIL|ok|panic)|SKIP' || true
	grep -q '^PASS$' "$bindir/escape.log" || { echo "escape battery failed" >&2; grep -B5 -A30 -- '--- FAIL' "$bindir/escape.log" | head -200 >&2; exit 1; }
	echo "ok  	github.com/moat-sandbox/moat/test/escape (as $TEST_USER)"
else
	go test -count=1 -timeout 20m -v ./test/escape
fi

step "workloads (Go, Python, C, npm, PATH; offline) as an unprivileged user"
if [ "$(id -u)" = 0 ]; then
	# A toolchain directory of its own under /usr/local, for the PATH
	# workload; removed afterwards only if this script made it.
	tool_dir=/usr/local/moat-test-tool
	if [ ! -e "$tool_dir" ]; then
		install -d -m 0755 "$tool_dir/bin"
		printf '#!/bin/sh\necho test-tool-ran\n' >"$tool_dir/bin/moat-test-tool"
		chmod 755 "$tool_dir/bin/moat-test-tool"
		cleanups+=('rm -rf "$tool_dir"')
	fi
	wldir=$(mktemp -d /var/tmp/moat-workloads.XXXXXX)
	cleanups+=('rm -rf "$wldir"')
	chmod 755 "$wldir"
	go test -c -o "$wldir/workloads.test" ./test/workloads
	chmod 755 "$wldir/workloads.test"
	user_home=$(getent passwd "$TEST_USER" | cut -d: -f6)
	(cd "$wldir" && setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups \
		env -i PATH="$tool_dir/bin:/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin" HOME="$user_home" USER="$TEST_USER" LANG=C.UTF-8 \
		MOAT_WORKLOADS_TOOL="$tool_dir/bin/moat-test-tool" \
		./workloads.test -test.v -test.count=1 -test.timeout 30m) | tee "$wldir/workloads.log" |
		grep -E '^(=== RUN|--- (PASS|FAIL|SKIP)|PASS|FAIL|ok|panic)|SKIP' || true
	grep -q '^PASS$' "$wldir/workloads.log" || { echo "workloads failed" >&2; grep -B5 -A40 -- '--- FAIL' "$wldir/workloads.log" | head -300 >&2; exit 1; }
	echo "ok  	github.com/moat-sandbox/moat/test/workloads (as $TEST_USER)"
else
	go test -count=1 -timeout 30m -v ./test/workloads
fi
