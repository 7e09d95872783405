#!/bin/sh
# npm's install step for an installed gensee package (npm install
# gensee-X.tgz): builds the native parts where they will run, since they
# depend on this kernel's BTF and this Node's headers: the eBPF object and
# its skeleton, the addon (node-gyp, npm's own), the launcher and the fd
# holder. In a source checkout `make build` does all of this (and
# scripts/setup.sh installs what it needs), so this step does nothing there.
# Anything missing is named with the Debian package that has it, before
# anything is built.
set -eu
cd "$(dirname "$0")/.."
if [ -d src ] && [ -f tsconfig.json ]; then
	exit 0 # a source checkout: make build
fi

say() { printf 'gensee install: %s\n' "$*" >&2; }

missing=""
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing="$missing $1 (apt-get install $2)"; }
need_file() { [ -e "$1" ] || missing="$missing $1 (apt-get install $2)"; }
need_cmd make make
need_cmd cc gcc
need_cmd c++ g++
need_cmd clang clang
need_cmd bpftool bpftool
need_cmd python3 python3
need_file /usr/include/bpf/libbpf.h libbpf-dev
need_file /usr/include/libelf.h libelf-dev
need_file /usr/include/zlib.h zlib1g-dev
need_file /usr/include/seccomp.h libseccomp-dev
need_file /usr/include/sys/capability.h libcap-dev
need_file /usr/include/protobuf-c/protobuf-c.h libprotobuf-c-dev
need_file /usr/include/openssl/evp.h libssl-dev
[ -e /sys/kernel/btf/vmlinux ] || missing="$missing /sys/kernel/btf/vmlinux (a kernel built with CONFIG_DEBUG_INFO_BTF=y, as Debian's is)"
# the Node headers node-gyp builds against: never downloaded
nodedir=$(npm config get nodedir 2>/dev/null || true)
case "$nodedir" in "" | undefined | null) nodedir=$(dirname "$(dirname "$(command -v node)")") ;; esac
[ -f "$nodedir/include/node/node.h" ] || missing="$missing $nodedir/include/node/node.h (apt-get install libnode-dev, or npm config set nodedir DIR)"
gyp=${npm_config_node_gyp:-}
if [ -z "$gyp" ] || [ ! -f "$gyp" ]; then
	gyp=$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
	[ -f "$gyp" ] || missing="$missing node-gyp (npm's own; not found)"
fi
if [ -n "$missing" ]; then
	say "cannot build the native parts (eBPF object, addon, launcher); missing:"
	printf '%s\n' "$missing" | sed 's/) /)\n/g' | sed 's/^ */  - /' >&2
	say "install those, then: npm rebuild gensee"
	exit 1
fi

say "building the eBPF object, the addon, the launcher and the fd holder (a minute or two)"
mkdir -p obj
# the checkout's setup step (apt, npm ci) is not ours to run here: mark it done
touch obj/setup.stamp
if ! make NODE_GYP="node $gyp" NODEDIR="$nodedir" build/Release/gensee.node obj/gensee-exec obj/gensee-fdkeep >&2; then
	say "the build failed (above); nothing else was changed. After fixing it: npm rebuild gensee"
	exit 1
fi
say "built: build/Release/gensee.node, obj/gensee-exec, obj/gensee-fdkeep"
