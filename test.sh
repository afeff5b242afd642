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
PACKAGES=(bubblewrap gcc libc6-dev make git python3 python3-pip python3-venv python3-numpy python3-pandas python3-matplotlib python3-yaml curl strace util-linux iproute2 socat procps python3-onnx)
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

step "go vet (linux)"
CGO_ENABLED=0 go vet ./...

# The macOS and Windows backends cannot run here: vet every package and
# compile every package's tests (their integration tests included) for
# both OSes and both architectures, so nothing rots. One go command per
# target builds its packages in parallel; the four targets run at once.
step "cross-compile: vet and test binaries for darwin and windows, amd64 and arm64"
cross_start=$SECONDS
cross_dir=$(mktemp -d)
cleanups+=('rm -rf "$cross_dir"')
cross_pids=()
for os in darwin windows; do
	for arch in amd64 arm64; do
		(GOOS=$os GOARCH=$arch CGO_ENABLED=0 go vet ./... &&
			GOOS=$os GOARCH=$arch CGO_ENABLED=0 go test -c -o /dev/null ./... >/dev/null) >"$cross_dir/$os-$arch.log" 2>&1 &
		cross_pids+=("$!:$os-$arch")
	done
done
cross_failed=0
for entry in "${cross_pids[@]}"; do
	if ! wait "${entry%%:*}"; then
		echo "cross-compile ${entry#*:} failed:" >&2
		cat "$cross_dir/${entry#*:}.log" >&2
		cross_failed=1
	fi
done
[ "$cross_failed" = 0 ] || exit 1
echo "ok  	darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 ($((SECONDS - cross_start)) s)"

step "unit and integration tests"
go test -count=1 -timeout 30m $(go list ./... | grep -v -e /test/escape -e /test/workloads)

step "privacy filter model engine (cgo, -tags onnx)"
# The ONNX engine's tests need libonnxruntime.so.1, taken from npm's
# onnxruntime-node package (npm pack runs no install script), and Debian's
# python3-onnx, which builds the tiny test model. onnxruntime_go v1.27.0
# needs the C API of ONNX Runtime 1.24 or newer.
ort_version=1.24.3
ort_dir="${XDG_CACHE_HOME:-$HOME/.cache}/moat-test/onnxruntime-node-$ort_version"
case "$(uname -s)/$(uname -m)" in
Linux/x86_64) ort_lib="$ort_dir/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" ;;
Linux/aarch64) ort_lib="$ort_dir/package/bin/napi-v6/linux/arm64/libonnxruntime.so.1" ;;
*) ort_lib= ;;
esac
if [ -n "$ort_lib" ] && [ ! -f "$ort_lib" ]; then
	mkdir -p "$ort_dir"
	(cd "$ort_dir" && npm pack --silent "onnxruntime-node@$ort_version" >/dev/null &&
		tar xzf "onnxruntime-node-$ort_version.tgz" "${ort_lib#"$ort_dir"/}" && rm -f "onnxruntime-node-$ort_version.tgz") ||
		echo "test.sh: could not fetch onnxruntime-node $ort_version from npm" >&2
fi
if [ -n "$ort_lib" ] && [ -f "$ort_lib" ] && /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
	CGO_ENABLED=1 go vet -tags onnx ./redact/... ./internal/cli/...
	MOAT_ONNXRUNTIME_LIB="$ort_lib" MOAT_REQUIRE_ONNX=1 CGO_ENABLED=1 go test -count=1 -timeout 10m -tags onnx ./redact/model/...
else
	echo "SKIP: the model engine's tagged tests did NOT run (no libonnxruntime.so.1 from onnxruntime-node, or no python3-onnx)" >&2
fi

step "escape battery as an unprivileged user"
if [ "$(id -u)" = 0 ]; then
	bindir=$(mktemp -d /var/tmp/moat-escape.XXXXXX)
	# Fake device nodes (each one is /dev/null: char 1:3), for the battery
	# to check each class is denied without its switch and open with it:
	# GPU (AllowGPU), NPU (AllowNPU), hardware (AllowHardware), and nodes
	# no switch opens. Only nodes and directories this script creates are
	# removed afterwards.
	fake_nodes=()
	fake_dirs=()
	for node in /dev/nvidia0 /dev/nvidiactl /dev/dri/renderD128 \
		/dev/accel/accel0 /dev/davinci0 /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc /dev/neuron0 /dev/vfio/vfio \
		/dev/bus/usb/001/001 /dev/ttyUSB0 /dev/ttyACM0 /dev/video0 /dev/media0 /dev/snd/controlC0 \
		/dev/hidraw0 /dev/input/event0 /dev/uinput; do
		if [ ! -e "$node" ]; then
			d=$(dirname "$node")
			missing=()
			while [ ! -e "$d" ]; do missing=("$d" "${missing[@]}"); d=$(dirname "$d"); done
			for d in "${missing[@]}"; do mkdir "$d"; fake_dirs=("$d" "${fake_dirs[@]}"); done
			mknod -m 0666 "$node" c 1 3
			fake_nodes+=("$node")
		fi
	done
	cleanups+=('rm -rf "$bindir"; for n in "${fake_nodes[@]}"; do rm -f "$n"; done; for d in "${fake_dirs[@]}"; do rmdir "$d" 2>/dev/null || true; done')
	chmod 755 "$bindir"
	go test -c -o "$bindir/escape.test" ./test/escape
	chmod 755 "$bindir/escape.test"
	user_home=$(getent passwd "$TEST_USER" | cut -d: -f6)
	# The battery's runs leave moat state (run journals, the quarantine of
	# what sandboxes created in writable places) in the test user's home:
	# remove it afterwards. It stays out of temp directories, which its
	# protection would otherwise seal.
	cleanups+=('rm -rf "$user_home/.local/state/moat"')
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
