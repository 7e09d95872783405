#!/bin/sh
# vmtest's guest side, run as pid 1 after the initramfs switched into the
# host's root (read-only 9p under a tmpfs overlay): set the machine up the
# way a Debian 12 boot leaves it for gensee, run the job's test files with
# scripts/vmtest-run.sh into the results share (/vmtest), power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
. /vmtest/job.env
off() {
  sync
  echo o >/proc/sysrq-trigger
  sleep 60
}
trap off EXIT
mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o nosuid,mode=755 devtmpfs /dev
{
  # the kernel's own modules (the .deb unpacked by vmtest.sh), for nft,
  # veth and the rest; request_module() runs busybox's modprobe
  mkdir -p "/lib/modules/$VMTEST_KVER"
  mount --bind "$VMTEST_ROOT/obj/vm/$VMTEST_KVER/lib/modules/$VMTEST_KVER" "/lib/modules/$VMTEST_KVER"
  mkdir -p /usr/local/sbin
  ln -sf "$(command -v busybox)" /usr/local/sbin/modprobe
  echo /usr/local/sbin/modprobe >/proc/sys/kernel/modprobe
  # the Debian 12 layout systemd mounts: cgroup2 alone at /sys/fs/cgroup,
  # controllers enabled at the root, bpffs, tmpfs /run and /tmp
  mount -t cgroup2 -o rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup
  for c in $(cat /sys/fs/cgroup/cgroup.controllers); do
    echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  done
  mount -t bpf -o rw,nosuid,nodev,noexec,relatime,mode=700 bpf /sys/fs/bpf
  mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
  mkdir -p /dev/pts /dev/shm
  mount -t devpts -o gid=5,mode=620,ptmxmode=000 devpts /dev/pts
  mount -t tmpfs -o nosuid,nodev tmpfs /dev/shm
  mount -t tmpfs -o nosuid,nodev,mode=755 tmpfs /run
  mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /tmp
  # systemd's sysctl defaults (50-default.conf) that gensee relies on
  sysctl -qw net.ipv4.ping_group_range="0 2147483647" || true
  ip link set lo up
  hostname vmtest
} >/vmtest/setup.log 2>&1
cut -d' ' -f1 /proc/uptime >/vmtest/boot_s
cd "$VMTEST_ROOT" || exit 1
GENSEE_CGROUP_PARENT=gs-vmtest GENSEE_TIME_SCALE=$VMTEST_SCALE scripts/vmtest-run.sh /vmtest "$(uname -r)" "$VMTEST_SCALE" $VMTEST_FILES
