#!/bin/sh
# make vmtest: run a list of compiled kernel test files on Debian 12's own
# 6.1 kernel under QEMU, and the same list on the host kernel, then print a
# table file x kernel -> pass/fail, assertions, time.
#
# Only Debian packages: qemu-system-x86 and busybox-static (installed from apt
# when missing), the kernel .deb fetched with `apt-get download` and unpacked
# with `dpkg -x` under obj/vm/ (never installed on the host). The guest boots
# a busybox initramfs made here, mounts the host's root read-only over 9p
# under a tmpfs overlay, so it runs this very worktree's build, and writes
# its results into a writable 9p share, obj/vm/run/.
#
# Environment:
#   VMTEST_FILES       space-separated dist/test/... files (default: below)
#   VMTEST_KERNEL_PKG  the kernel package (default: newest linux-image-6.1.0-N-amd64)
#   VMTEST_HOST=0      skip the host run
#   VMTEST_VM=0        skip the VM run
#   VMTEST_SMP, VMTEST_MEM  guest CPUs (2) and memory (3G)
#   VMTEST_TIME_SCALE  the guest's GENSEE_TIME_SCALE (default 10: TCG is slow)
#   VMTEST_TIMEOUT     seconds before the whole VM run is abandoned (default 5400)
#   VMTEST_ACCEL       auto (KVM when /dev/kvm and the CPU's vmx/svm are there), kvm, tcg
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VM=$ROOT/obj/vm
# issue 26's list: the thread cases, the DNS tour and doctor against the kernel
DEFAULT_FILES='dist/test/vmtest/smoke.test.js dist/test/vmtest/tour.test.js dist/test/cli/doctor.test.js dist/test/pause/fastpath-cache.test.js dist/test/pause/threads.test.js dist/test/pause/run.test.js dist/test/dns/names.test.js'
FILES=${VMTEST_FILES:-$DEFAULT_FILES}
SMP=${VMTEST_SMP:-2}
MEM=${VMTEST_MEM:-3G}
SCALE=${VMTEST_TIME_SCALE:-10}
VM_TIMEOUT=${VMTEST_TIMEOUT:-5400}

say() { echo "vmtest: $*" >&2; }
die() {
  say "$*"
  exit 1
}

case ${VMTEST_ACCEL:-auto} in
auto | kvm | tcg) ;;
*) die "VMTEST_ACCEL must be auto, kvm or tcg, not ${VMTEST_ACCEL}" ;;
esac
# the guest mounts its own tmpfs (or proc, sys, dev) over these: a tree
# under them is not there for it
case $ROOT/ in
/tmp/* | /run/* | /dev/* | /proc/* | /sys/* | /var/run/*) die "$ROOT is under a directory the guest mounts its own tmpfs over (/tmp, /run): use a tree elsewhere" ;;
esac
for f in $FILES; do
  [ -f "$f" ] || die "no such test file: $f (run make build first; paths are dist/test/...js)"
done

# ---- packages ---------------------------------------------------------------
need_pkg() { # command package
  command -v "$1" >/dev/null 2>&1 && return 0
  say "installing $2 from apt"
  [ "$(id -u)" = 0 ] || die "$1 is missing and installing $2 needs root"
  apt-get install -y --no-install-recommends "$2" >"$VM/apt.log" 2>&1 || die "apt-get install $2 failed: see $VM/apt.log"
}

# ---- the kernel ---------------------------------------------------------------
kernel() {
  pkg=${VMTEST_KERNEL_PKG:-}
  if [ -z "$pkg" ]; then
    pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | cut -d' ' -f1 | sort -V | tail -n1)
    [ -n "$pkg" ] || die "apt knows no linux-image-6.1.0-N-amd64 (is bookworm in sources.list? apt-get update?)"
  fi
  KVER=${pkg#linux-image-}
  KDIR=$VM/$KVER
  if [ ! -f "$KDIR/boot/vmlinuz-$KVER" ]; then
    say "fetching $pkg (apt-get download, unpacked with dpkg -x under obj/vm/, not installed)"
    rm -rf "$VM/deb" "$KDIR.tmp"
    mkdir -p "$VM/deb" "$KDIR.tmp"
    (cd "$VM/deb" && apt-get download "$pkg" >"$VM/download.log" 2>&1) || die "apt-get download $pkg failed: see $VM/download.log"
    dpkg -x "$VM"/deb/*.deb "$KDIR.tmp"
    # the .deb ships no modules.dep (its postinst runs depmod); make one
    busybox depmod -b "$KDIR.tmp" "$KVER"
    rm -rf "$KDIR" "$VM/deb"
    mv "$KDIR.tmp" "$KDIR"
  fi
}

# a module's path (relative to lib/modules/KVER) and its dependencies, deepest first
# (a subshell each, so the recursion does not share its variables)
mod_closure() ( # name
  dep=$KDIR/lib/modules/$KVER/modules.dep
  line=$(grep -E "/$1\.ko:" "$dep") || die "module $1 not in $dep"
  for d in ${line#*:}; do
    mod_closure "$(basename "$d" .ko)"
  done
  echo "${line%%:*}"
)

# ---- the initramfs ------------------------------------------------------------
initramfs() {
  out=$VM/initramfs-$KVER.cpio.gz
  [ -f "$out" ] && [ "$out" -nt "$0" ] && [ "$out" -nt "$ROOT/scripts/vmtest-init.sh" ] && return 0
  say "building $out"
  d=$VM/initramfs.tmp
  rm -rf "$d"
  mkdir -p "$d/bin" "$d/proc" "$d/sys" "$d/dev" "$d/host" "$d/rw" "$d/newroot" "$d/modules"
  cp "$(command -v busybox)" "$d/bin/busybox"
  # virtio-pci for the devices, 9p over virtio for the shares, overlay for the root
  : >"$d/modules/order"
  for m in virtio_pci 9pnet_virtio 9p overlay; do
    for p in $(mod_closure "$m"); do
      grep -qx "$(basename "$p")" "$d/modules/order" && continue
      cp "$KDIR/lib/modules/$KVER/$p" "$d/modules/"
      basename "$p" >>"$d/modules/order"
    done
  done
  cp "$ROOT/scripts/vmtest-init.sh" "$d/init"
  chmod 755 "$d/init"
  (cd "$d" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$out.tmp"
  mv "$out.tmp" "$out"
  rm -rf "$d"
}

# ---- running one list of files on a kernel ------------------------------------
# Both the host and the guest run scripts/vmtest-run.sh, which writes one
# line per file into RESULTS: file, rc, assertions passed/failed, seconds.
run_host() {
  out=$VM/host
  rm -rf "$out"
  mkdir -p "$out"
  say "host kernel $(uname -r): $FILES"
  parent=${GENSEE_CGROUP_PARENT:-gs-vmtest}
  GENSEE_CGROUP_PARENT=$parent "$ROOT/scripts/vmtest-run.sh" "$out" "$(uname -r)" 1 $FILES
  # the tests' parent cgroup on the host and the guard gensee pinned for it
  # (src/dataplane.ts guardDirFor: named by the cgroup's inode): removed
  # once the cgroup is empty (a test left behind keeps both, and the name
  # says whose they are)
  cg2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' /proc/self/mountinfo | head -n 1)
  if [ -n "$cg2" ] && [ -d "$cg2/$parent" ]; then
    ino=$(stat -c %i "$cg2/$parent")
    if [ -z "$(cat "$cg2/$parent/cgroup.procs")" ] && [ -z "$(find "$cg2/$parent" -mindepth 1 -type d -print -quit)" ]; then
      rm -rf "/sys/fs/bpf/gensee/_guard-$ino"
      rmdir "$cg2/$parent" || say "host: could not remove $cg2/$parent"
    else
      say "host: $cg2/$parent is not empty: it and its guard are left as they are"
    fi
  fi
}

run_vm() {
  out=$VM/run
  rm -rf "$out"
  mkdir -p "$out"
  {
    echo "VMTEST_ROOT='$ROOT'"
    echo "VMTEST_FILES='$FILES'"
    echo "VMTEST_SCALE='$SCALE'"
    echo "VMTEST_KVER='$KVER'"
  } >"$out/job.env"
  accel=tcg
  cpu=max
  why='TCG, software emulation: slow'
  case ${VMTEST_ACCEL:-auto} in
  kvm)
    accel=kvm
    cpu=host
    why=kvm
    ;;
  tcg) why='TCG (VMTEST_ACCEL=tcg): slow' ;;
  auto)
    # KVM only with hardware virtualization: a /dev/kvm without vmx/svm
    # (e.g. kvm-pvm, which runs only PVM-built guest kernels) hangs a
    # stock Debian kernel before its first line
    if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
      accel=kvm
      cpu=host
      why=kvm
    elif [ -e /dev/kvm ]; then
      why='TCG: /dev/kvm is there but the CPU shows no vmx/svm; VMTEST_ACCEL=kvm forces it'
    fi
    ;;
  esac
  echo "$accel" >"$out/accel"
  say "booting $KVER under qemu ($why, $SMP cpus, $MEM): $FILES"
  t0=$(date +%s)
  # the console is the serial port; its log is kept whole in run/console.log
  # while the test lines go to the results share
  set +e
  timeout --foreground -k 10 "$VM_TIMEOUT" qemu-system-x86_64 \
    -machine q35,accel=$accel -cpu $cpu -smp "$SMP" -m "$MEM" \
    -nographic -no-reboot -nodefaults -serial stdio \
    -kernel "$KDIR/boot/vmlinuz-$KVER" -initrd "$VM/initramfs-$KVER.cpio.gz" \
    -append "console=ttyS0 panic=-1 oops=panic quiet loglevel=4 rdinit=/init vmtest.kver=$KVER" \
    -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
    -fsdev local,id=results,path="$out",security_model=none \
    -device virtio-9p-pci,fsdev=results,mount_tag=results \
    -device virtio-rng-pci \
    </dev/null >"$out/console.log" 2>&1
  qrc=$?
  set -e
  say "qemu exited $qrc after $(($(date +%s) - t0)) s (console: $out/console.log)"
  if [ ! -f "$out/results" ]; then
    tail -n 40 "$out/console.log" >&2
    die "the guest wrote no results"
  fi
}

table() {
  printf '\n%-44s %-22s %-6s %-14s %s\n' file kernel result assertions seconds
  for k in "$VM/host" "$VM/run"; do
    [ -f "$k/results" ] || continue
    kv=$(cat "$k/kernel")
    while read -r file rc pass fail secs; do
      r=pass
      [ "$rc" = 0 ] || r="FAIL($rc)"
      printf '%-44s %-22s %-6s %-14s %s\n' "${file#dist/test/}" "$kv" "$r" "$pass/$((pass + fail))" "$secs"
    done <"$k/results"
    # a file the run never finished (the guest was stopped, or hung) is a failure too
    for f in $FILES; do
      grep -q "^$f " "$k/results" || {
        printf '%-44s %-22s %-6s\n' "${f#dist/test/}" "$kv" "NOT RUN (stopped before it ended)"
        echo "$f 255 0 0 -" >>"$k/results"
      }
    done
  done
  for k in "$VM/host" "$VM/run"; do
    [ -f "$k/results" ] || continue
    [ -f "$k/boot_s" ] && echo "$(cat "$k/kernel") ($(cat "$k/accel" 2>/dev/null)): boot to first test $(cat "$k/boot_s") s"
  done
  echo "TAP output per file: $VM/host/*.tap, $VM/run/*.tap"
}

mkdir -p "$VM"
# only this invocation's runs are reported
[ "${VMTEST_HOST:-1}" = 0 ] || rm -rf "$VM/host"
[ "${VMTEST_VM:-1}" = 0 ] || rm -rf "$VM/run"
fail=0
if [ "${VMTEST_HOST:-1}" != 0 ]; then
  run_host || fail=1
fi
if [ "${VMTEST_VM:-1}" != 0 ]; then
  need_pkg qemu-system-x86_64 qemu-system-x86
  need_pkg busybox busybox-static
  kernel
  initramfs
  run_vm || fail=1
fi
table
for k in "$VM/host" "$VM/run"; do
  [ -f "$k/results" ] || continue
  awk '$2 != 0 { bad = 1 } END { exit bad }' "$k/results" || fail=1
done
exit $fail
