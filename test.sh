#!/usr/bin/env bash
# Runs moat's whole test suite: vet for every OS, unit and integration tests,
# the escape battery, which attacks the sandbox for real as an unprivileged
# user, the workloads, real toolchains (Go, Python, C, npm) building real
# projects in sandboxes, offline, as that user too, and every moat command
# of the README's recipes, against loopback stand-ins of the registries
# (test/recipes), as that user.
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
PACKAGES=(bubblewrap gcc libc6-dev make git python3 python3-pip python3-venv python3-numpy python3-pandas python3-matplotlib python3-yaml curl strace util-linux iproute2 socat procps python3-onnx cargo)
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
for tool in go gcc cc make git python3 curl strace setpriv node npm cargo rustc; do
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
t0=$SECONDS
CGO_ENABLED=0 go vet ./...
echo "ok  	go vet (linux) ($((SECONDS - t0)) s)"

# Timings of each step, printed at the end, and the steps that failed:
# once the suites run in the background, a failed step is reported at the
# end, with theirs, instead of stopping the script.
timings=()
failed_steps=()
timing() { timings+=("$(printf '%-58s %4d s' "$1" "$2")"); }

# The suites that run as the unprivileged test user (the escape battery,
# the workloads and the README's recipes) spend much of their time waiting
# on sandboxes, deadlines and one another (the battery's serial tests): they
# run in the background, the battery beside the workloads and then the
# recipes, concurrently with the cross-compile and the unit tests, and the
# script waits for all of them at the end. Their output goes to log
# files, printed (filtered) once each ends.
step "starting the escape battery, the workloads and the recipes (as an unprivileged user, in the background)"
t0=$SECONDS
suite_dir=$(mktemp -d /var/tmp/moat-suites.XXXXXX)
cleanups+=('rm -rf "$suite_dir"')
chmod 755 "$suite_dir"
# The three suites' test binaries, built by one go command.
go test -c -o "$suite_dir/" ./test/escape ./test/workloads ./test/recipes
# The README the recipes come from, where the test user can read it
# (MOAT_RECIPES_README, when set, names another one).
install -m 0644 "${MOAT_RECIPES_README:-README.md}" "$suite_dir/README.md"
timing "building the suites' test binaries" $((SECONDS - t0))
suite_pids=()
if [ "$(id -u)" = 0 ]; then
	# Fake device nodes (each one is /dev/null: char 1:3), for the battery
	# to check each class is denied without its switch and open with it:
	# GPU (AllowGPU), NPU (AllowNPU), hardware (AllowHardware), and nodes
	# no switch opens. They are made before any suite starts, since the
	# root package's TestDeviceClassesAsRoot, running meanwhile, reuses the
	# nodes it finds (and then leaves them). Only nodes and directories
	# this script creates are removed afterwards.
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
	cleanups+=('for n in "${fake_nodes[@]}"; do rm -f "$n"; done; for d in "${fake_dirs[@]}"; do rmdir "$d" 2>/dev/null || true; done')
	# A toolchain directory of its own under /usr/local, for the PATH
	# workload; removed afterwards only if this script made it.
	tool_dir=/usr/local/moat-test-tool
	if [ ! -e "$tool_dir" ]; then
		install -d -m 0755 "$tool_dir/bin"
		printf '#!/bin/sh\necho test-tool-ran\n' >"$tool_dir/bin/moat-test-tool"
		chmod 755 "$tool_dir/bin/moat-test-tool"
		cleanups+=('rm -rf "$tool_dir"')
	fi
	user_home=$(getent passwd "$TEST_USER" | cut -d: -f6)
	# The battery's runs leave moat state (run journals, the quarantine of
	# what sandboxes created in writable places) in the test user's home:
	# remove it afterwards. It stays out of temp directories, which its
	# protection would otherwise seal. The workloads and the recipes keep
	# theirs (state and caches) apart, in the suites' directory, so that
	# the concurrent suites never see each other's records.
	cleanups+=('rm -rf "$user_home/.local/state/moat"')
	install -d -o "$TEST_USER" -g "$TEST_USER" -m 0700 "$suite_dir/wl-state" "$suite_dir/wl-cache"
	chmod 755 "$suite_dir"/*.test
	as_user() {
		setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups \
			env -i PATH="$tool_dir/bin:/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin" HOME="$user_home" USER="$TEST_USER" LANG=C.UTF-8 "$@"
	}
	# A directory in shared temp that only root can write, for the battery
	# to check that a passed variable naming it shows it read-only.
	root_temp=$(mktemp -d /var/tmp/moat-roottemp.XXXXXX)
	chmod 755 "$root_temp"
	echo data >"$root_temp/f"
	chmod 644 "$root_temp/f"
	cleanups+=('rm -rf "$root_temp"')
	# A file system of the battery's own for the tests that measure a disk
	# limit to within a few blocks: the disk watch reads free space, and
	# the suites running beside it free whole trees.
	quiet_fs=$(mktemp -d /var/tmp/moat-quietfs.XXXXXX)
	mount -t tmpfs -o size=512m,mode=0700,uid="$(id -u "$TEST_USER")",gid="$(id -g "$TEST_USER")" moat-quietfs "$quiet_fs"
	cleanups+=('umount "$quiet_fs"; rmdir "$quiet_fs"')
	quiet_fs2=$(mktemp -d /var/tmp/moat-quietfs2.XXXXXX)
	mount -t tmpfs -o size=256m,mode=0700,uid="$(id -u "$TEST_USER")",gid="$(id -g "$TEST_USER")" moat-quietfs2 "$quiet_fs2"
	cleanups+=('umount "$quiet_fs2"; rmdir "$quiet_fs2"')
	(set +e; cd "$suite_dir" && s=$SECONDS && as_user MOAT_ESCAPE_ROOT_TEMP="$root_temp" MOAT_ESCAPE_QUIET_FS="$quiet_fs" MOAT_ESCAPE_QUIET_FS2="$quiet_fs2" ./escape.test -test.v -test.count=1 -test.timeout 20m >escape.log 2>&1; echo "$? $((SECONDS - s))" >escape.status) &
	suite_pids+=("$!")
	(set +e; cd "$suite_dir" && s=$SECONDS &&
		as_user XDG_STATE_HOME="$suite_dir/wl-state" XDG_CACHE_HOME="$suite_dir/wl-cache" MOAT_WORKLOADS_TOOL="$tool_dir/bin/moat-test-tool" \
			./workloads.test -test.v -test.count=1 -test.timeout 30m >workloads.log 2>&1
		echo "$? $((SECONDS - s))" >workloads.status
		s=$SECONDS
		as_user XDG_STATE_HOME="$suite_dir/wl-state" XDG_CACHE_HOME="$suite_dir/wl-cache" MOAT_RECIPES_README="$suite_dir/README.md" \
			./recipes.test -test.v -test.count=1 -test.timeout 30m >recipes.log 2>&1
		echo "$? $((SECONDS - s))" >recipes.status) &
	suite_pids+=("$!")
else
	# As an ordinary user: the same suites, as yourself.
	(set +e; cd "$suite_dir" && s=$SECONDS && ./escape.test -test.v -test.count=1 -test.timeout 20m >escape.log 2>&1; echo "$? $((SECONDS - s))" >escape.status) &
	suite_pids+=("$!")
	(set +e; cd "$suite_dir" && s=$SECONDS && ./workloads.test -test.v -test.count=1 -test.timeout 30m >workloads.log 2>&1
		echo "$? $((SECONDS - s))" >workloads.status
		s=$SECONDS
		MOAT_RECIPES_README="$suite_dir/README.md" ./recipes.test -test.v -test.count=1 -test.timeout 30m >recipes.log 2>&1
		echo "$? $((SECONDS - s))" >recipes.status) &
	suite_pids+=("$!")
fi
# (Each suite's subshell turns errexit off: a failed suite must still
# write its status, and a failed workloads run must not skip the recipes.)
# Stop the background suites if the script ends early (a failed step).
cleanups=('for p in "${suite_pids[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done; wait' "${cleanups[@]}")
echo "started (logs in $suite_dir)"

# The macOS and Windows backends cannot run here: vet every package (vet
# type-checks each package's tests too, integration tests included) for
# both OSes and both architectures, and build every package, which links
# the commands, so nothing rots. Linking each package's test binary as
# well would add nothing vet and the build do not already check, and took
# most of this step's time. One go command per target builds its packages
# in parallel; the four targets run at once, in the background too, while
# the unit tests run.
step "cross-compile: vet and build for darwin and windows, amd64 and arm64 (in the background)"
cross_start=$SECONDS
cross_dir=$(mktemp -d)
cross_pids=()
cleanups=('for e in "${cross_pids[@]}"; do pkill -P "${e%%:*}" 2>/dev/null || true; kill "${e%%:*}" 2>/dev/null || true; done' "${cleanups[@]}" 'rm -rf "$cross_dir"')
for os in darwin windows; do
	for arch in amd64 arm64; do
		(GOOS=$os GOARCH=$arch CGO_ENABLED=0 go vet ./... &&
			GOOS=$os GOARCH=$arch CGO_ENABLED=0 go build ./... >/dev/null) >"$cross_dir/$os-$arch.log" 2>&1 &
		cross_pids+=("$!:$os-$arch")
	done
done
echo "started"

# test/mcpclient drives moat mcp with MCP clients from npm: the TypeScript
# SDK's client (@modelcontextprotocol/sdk) and the conformance suite
# (@modelcontextprotocol/conformance), pinned by its package-lock.json.
# npm ci installs them into test/mcpclient/node_modules, which git ignores,
# when they are missing or differ from the lock; its tests fail without
# them.
step "npm packages of test/mcpclient (MCP client and conformance suite)"
if ! (cd test/mcpclient && npm ls --silent >/dev/null 2>&1); then
	(cd test/mcpclient && npm ci --silent --no-audit --no-fund) || failed_steps+=("npm ci in test/mcpclient")
fi
echo "ok  	test/mcpclient/node_modules"

step "unit and integration tests"
t0=$SECONDS
go test -count=1 -timeout 30m $(go list ./... | grep -v -e /test/escape -e /test/workloads -e /test/recipes) ||
	failed_steps+=("unit and integration tests")
timing "unit and integration tests" $((SECONDS - t0))

step "privacy filter model engine (cgo, -tags onnx)"
t0=$SECONDS
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
	{ CGO_ENABLED=1 go vet -tags onnx ./redact/... ./internal/cli/... &&
		MOAT_ONNXRUNTIME_LIB="$ort_lib" MOAT_REQUIRE_ONNX=1 CGO_ENABLED=1 go test -count=1 -timeout 10m -tags onnx ./redact/model/...; } ||
		failed_steps+=("privacy filter model engine")
else
	echo "SKIP: the model engine's tagged tests did NOT run (no libonnxruntime.so.1 from onnxruntime-node, or no python3-onnx)" >&2
fi
timing "privacy filter model engine" $((SECONDS - t0))

step "cross-compile: waiting for darwin and windows, amd64 and arm64"
cross_failed=0
for entry in "${cross_pids[@]}"; do
	if ! wait "${entry%%:*}"; then
		echo "cross-compile ${entry#*:} failed:" >&2
		cat "$cross_dir/${entry#*:}.log" >&2
		cross_failed=1
	fi
done
cross_pids=()
[ "$cross_failed" = 0 ] || failed_steps+=("cross-compile")
timing "cross-compile (4 targets, background)" $((SECONDS - cross_start))
echo "ok  	darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 ($((SECONDS - cross_start)) s)"

# The background suites: wait for each, then print its summary (and, on
# failure, the failing tests' output).
step "waiting for the escape battery, the workloads and the recipes"
t0=$SECONDS
for p in "${suite_pids[@]}"; do wait "$p" || true; done
suite_pids=()
timing "waiting for the background suites" $((SECONDS - t0))
who="as $TEST_USER"
[ "$(id -u)" = 0 ] || who="as $(id -un)"
for suite in escape workloads recipes; do
	case $suite in
	escape) title="escape battery" ;;
	workloads) title="workloads (Go, Python, C, npm, PATH; offline)" ;;
	recipes) title="the README's recipes (loopback registries; offline)" ;;
	esac
	step "$title, $who"
	log="$suite_dir/$suite.log"
	grep -E '^(=== RUN|--- (PASS|FAIL|SKIP)|PASS|FAIL|ok|panic)|SKIP' "$log" || true
	read -r rc secs 2>/dev/null <"$suite_dir/$suite.status" || { rc=1; secs=0; }
	timing "$title (background)" "$secs"
	if [ "$rc" = 0 ] && grep -q '^PASS$' "$log"; then
		echo "ok  	github.com/moat-sandbox/moat/test/$suite ($who, $secs s)"
	else
		echo "$suite failed (exit $rc)" >&2
		grep -B5 -A40 -- '--- FAIL' "$log" | head -300 >&2 || tail -50 "$log" >&2
		failed_steps+=("$suite")
	fi
done

step "time per step (the suites ran in the background, at the same time as the steps above)"
printf '%s\n' "${timings[@]}"
echo "total: $SECONDS s"
if [ "${#failed_steps[@]}" -gt 0 ]; then
	echo "test.sh: failed: ${failed_steps[*]}" >&2
	exit 1
fi
