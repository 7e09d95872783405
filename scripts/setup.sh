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

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || { echo "setup: need root to install:$missing" >&2; exit 1; }
	echo "setup: installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# npm dependencies (lockfile-exact when the lockfile is present)
if [ ! -d node_modules/.bin ] || [ package.json -nt node_modules/.package-lock.json ]; then
	echo "setup: installing npm dependencies"
	if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; \
	else npm install --no-audit --no-fund --loglevel=error; fi
fi

# bpffs for pinned hooks (the boundary outlives the process that set it up)
if [ "$(id -u)" = 0 ] && ! grep -q " /sys/fs/bpf bpf " /proc/self/mounts; then
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null || echo "setup: warning: could not mount bpffs at /sys/fs/bpf" >&2
fi
echo "setup: ok"
