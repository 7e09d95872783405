#!/bin/busybox sh
# vmtest's initramfs /init (scripts/vmtest.sh builds the image): load the
# virtio, 9p and overlay modules, mount the host's root read-only over 9p
# under a tmpfs overlay, mount the results share at /vmtest, and hand over
# to scripts/vmtest-guest.sh inside that root.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
fail() {
  echo "vmtest-init: $*"
  echo o >/proc/sysrq-trigger
  sleep 60
}
for m in $(cat /modules/order); do
  insmod "/modules/$m" || fail "insmod $m"
done
# the virtio devices are probed asynchronously: wait for both 9p shares
i=0
while [ "$(ls /sys/bus/virtio/drivers/9pnet_virtio/virtio*/mount_tag 2>/dev/null | wc -l)" -lt 2 ]; do
  i=$((i + 1))
  [ $i -gt 300 ] && fail "no 9p shares: $(ls /sys/bus/virtio/devices) $(cat /proc/filesystems | grep -c 9p)"
  sleep 0.1
done
# 9p: msize as large as virtio allows; the host root does not change under
# the guest during a run, so its pages may be cached (cache=loose)
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /host || fail "mount hostroot"
mount -t tmpfs -o mode=755 rw /rw || fail "tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work /newroot || fail "overlay"
mkdir -p /newroot/vmtest
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results /newroot/vmtest || fail "mount results"
. /newroot/vmtest/job.env
# the guest side mounts its own /proc, /sys and /dev inside the new root
umount /proc /sys /dev
exec switch_root /newroot /bin/sh "$VMTEST_ROOT/scripts/vmtest-guest.sh"
