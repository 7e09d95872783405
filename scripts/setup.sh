#!/bin/sh
# Installs everything a fresh Debian 12 machine needs to build and test
# gensee. Idempotent: re-running it only checks. python3: node-gyp runs
# gyp with it to build the addon, and test/counters/nft.test.ts uses it.
# clang-format: make lint checks the hand-written C with it.
# podman, containerd: test/oci/podman.test.ts and containerd.test.ts run
# containers through them
# (podman with --runtime runc; golang-github-containers-common brings the
# default seccomp profile `gensee profile` builds on).
# chromium: test/cockpit drives the cockpit page in it, headless, through
# playwright-core (which downloads no browser of its own).
set -eu
cd "$(dirname "$0")/.."

PKGS="clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config make g++ \
 libseccomp-dev liburing-dev libcap-dev nftables libnftables-dev \
 protobuf-c-compiler libprotobuf-c-dev protobuf-compiler libssl-dev \
 runc crun podman golang-github-containers-common containerd busybox-static curl iproute2 util-linux python3 clang-format chromium"

# progress: a numbered line per step; on a terminal the long steps (apt,
# npm) also show a ticking status line, so a fresh machine's minutes of
# downloads are not minutes of silence. Not a terminal: the plain lines only.
# NO_COLOR drops the bold.
if [ -t 2 ]; then TTY=1; else TTY=0; fi
if [ "$TTY" = 1 ] && [ -z "${NO_COLOR:-}" ]; then B=$(printf '\033[1m'); N=$(printf '\033[22m'); else B=''; N=''; fi
STEP=0
STEPS=1
step() { STEP=$((STEP + 1)); printf '%ssetup: [%d/%d] %s%s\n' "$B" "$STEP" "$STEPS" "$*" "$N" >&2; }
# ticking CMD...: run it; on a terminal, a status line counts the seconds
# until it ends (its output goes to the log only on failure)
ticking() {
	if [ "$TTY" = 0 ]; then "$@"; return; fi
	log=$(mktemp)
	"$@" >"$log" 2>&1 &
	pid=$!
	s=0
	while kill -0 "$pid" 2>/dev/null; do
		printf '\r\033[K  %s … %ds' "$1" "$s" >&2
		sleep 1
		s=$((s + 1))
	done
	rc=0
	wait "$pid" || rc=$?
	printf '\r\033[K' >&2
	[ "$rc" = 0 ] || cat "$log" >&2
	rm -f "$log"
	return "$rc"
}

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
need_npm=0
if [ ! -d node_modules/.bin ] || [ package.json -nt node_modules/.package-lock.json ]; then need_npm=1; fi
need_bpffs=0
if [ "$(id -u)" = 0 ] && ! grep -q " /sys/fs/bpf bpf " /proc/self/mounts; then need_bpffs=1; fi
[ -n "$missing" ] && STEPS=$((STEPS + 2))
STEPS=$((STEPS + need_npm + need_bpffs))
step "$(echo $PKGS | wc -w) Debian packages checked:$([ -n "$missing" ] && echo "$missing" | wc -w | sed 's/^/ /;s/$/ to install/' || echo ' all installed')"

if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || { echo "setup: need root to install:$missing" >&2; exit 1; }
	step "apt-get update"
	ticking apt-get update -qq
	step "apt-get install:$missing"
	DEBIAN_FRONTEND=noninteractive ticking apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# npm dependencies (lockfile-exact when the lockfile is present)
if [ "$need_npm" = 1 ]; then
	if [ -f package-lock.json ]; then
		step "npm ci (the npm dependencies, as the lockfile has them)"
		ticking npm ci --no-audit --no-fund --loglevel=error
	else
		step "npm install (the npm dependencies)"
		ticking npm install --no-audit --no-fund --loglevel=error
	fi
fi

# bpffs for pinned hooks (the boundary outlives the process that set it up)
if [ "$need_bpffs" = 1 ]; then
	step "mounting bpffs at /sys/fs/bpf"
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null || echo "setup: warning: could not mount bpffs at /sys/fs/bpf" >&2
fi
echo "setup: ok"
