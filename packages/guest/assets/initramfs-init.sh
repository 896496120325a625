#!/bin/sh
# aenv initramfs /init (busybox sh), the first stage of the guest init.
#
# 1. load the virtio/erofs modules listed in /lib/modules/load-order (a module
#    that does not load is skipped with a notice: a user-supplied kernel may
#    have the drivers built in; a driver that is really missing shows below
#    as a missing disk or eth0);
# 2. find the drives by virtio-blk serial: "rootfs" (the image's root
#    filesystem) and "tools" (the read-only aenv tools image);
# 3. mount the rootfs on /newroot, a tmpfs on /newroot/run, the tools image
#    on /newroot/run/aenv/tools, and /proc, /sys, /dev, /dev/pts, /dev/shm,
#    /tmp inside the new root;
# 4. configure lo and eth0 and the hostname from the kernel command line
#    (aenv.ip=<addr>/<prefix> aenv.gw=<addr> aenv.dns=<a,b> aenv.hostname=<name>;
#    nothing is hard-coded here), and write /etc/resolv.conf, /etc/hostname
#    and /etc/hosts when the rootfs is writable;
# 5. switch_root to the aenv-init supervisor (PID 1), which runs envd as root
#    inside the image's root filesystem (with --set-clock: the host sets the
#    guest clock through envd's /init after every restore), restarts it if it
#    dies and reaps orphans.
# Any failure prints "aenv-initramfs: FATAL: ..." and reboots, which ends the
# VM (QEMU runs with -no-reboot), so the host sees a quick exit, not a hang.
export PATH=/bin
TOOLS=/run/aenv/tools

fatal() {
  echo "aenv-initramfs: FATAL: $*"
  reboot -f
  sleep 5
}

mount -t proc proc /proc || fatal "mount /proc"
mount -t sysfs sysfs /sys || fatal "mount /sys"
mount -t devtmpfs devtmpfs /dev || fatal "mount /dev"

IP='' GW='' DNS='' NAME=''
for arg in $(cat /proc/cmdline); do
  case "$arg" in
  aenv.ip=*) IP="${arg#aenv.ip=}" ;;
  aenv.gw=*) GW="${arg#aenv.gw=}" ;;
  aenv.dns=*) DNS="${arg#aenv.dns=}" ;;
  aenv.hostname=*) NAME="${arg#aenv.hostname=}" ;;
  esac
done

while read -r m; do
  [ -n "$m" ] && { insmod "/lib/modules/$m.ko" || echo "aenv-initramfs: $m not loaded (built into this kernel?)"; }
done </lib/modules/load-order

# the network is configured while /sys is still here (it moves into the new root below)
ip link set lo up
if [ -n "$IP" ]; then
  [ -e /sys/class/net/eth0 ] || fatal "aenv.ip is set but there is no eth0"
  ip addr add "$IP" dev eth0 || fatal "address $IP on eth0"
  ip link set eth0 up || fatal "eth0 up"
  if [ -n "$GW" ]; then ip route add default via "$GW" || fatal "default route via $GW"; fi
fi
[ -n "$NAME" ] && hostname "$NAME"

# prints /dev/<name> of the virtio disk whose serial is $1, waiting up to 5 s
find_drive() {
  i=0
  while [ $i -lt 100 ]; do
    for d in /sys/block/vd*; do
      [ -e "$d/serial" ] || continue
      if [ "$(cat "$d/serial")" = "$1" ] && [ -b "/dev/${d##*/}" ]; then
        echo "/dev/${d##*/}"
        return 0
      fi
    done
    usleep 50000
    i=$((i + 1))
  done
  return 1
}

ROOT_DEV=$(find_drive rootfs) || fatal "no virtio disk with serial 'rootfs'"
TOOLS_DEV=$(find_drive tools) || fatal "no virtio disk with serial 'tools'"

# busybox mount falls back to read-only for a write-protected device
mount "$ROOT_DEV" /newroot || fatal "mount rootfs $ROOT_DEV"
[ -d /newroot/run ] || mkdir /newroot/run || fatal "the rootfs has no /run and is read-only"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || fatal "mount /run"
mkdir -p /newroot$TOOLS
mount -t erofs -o ro "$TOOLS_DEV" /newroot$TOOLS || fatal "mount tools $TOOLS_DEV"

for d in dev proc sys tmp; do
  [ -d /newroot/$d ] || mkdir /newroot/$d || fatal "the rootfs has no /$d and is read-only"
done
mount --move /dev /newroot/dev || fatal "move /dev"
mount --move /proc /newroot/proc || fatal "move /proc"
mount --move /sys /newroot/sys || fatal "move /sys"
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /newroot/dev/pts || fatal "mount /dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /newroot/dev/shm || fatal "mount /dev/shm"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /newroot/tmp || fatal "mount /tmp"

# files in the image; a read-only rootfs keeps its own
etc=/newroot/etc
if [ -d $etc ] && touch $etc/.aenv-rw 2>/dev/null; then
  rm -f $etc/.aenv-rw
  if [ -n "$DNS" ]; then
    rm -f $etc/resolv.conf # may be a dangling symlink into another root's /run
    for s in $(echo "$DNS" | tr ',' ' '); do echo "nameserver $s"; done >$etc/resolv.conf
  fi
  if [ -n "$NAME" ]; then
    echo "$NAME" >$etc/hostname
    grep -qs '^127\.0\.0\.1[[:space:]]' $etc/hosts || echo "127.0.0.1	localhost" >>$etc/hosts
    grep -qs "[[:space:]]$NAME\$" $etc/hosts || echo "127.0.1.1	$NAME" >>$etc/hosts
  fi
fi

echo "aenv-initramfs: rootfs=$ROOT_DEV tools=$TOOLS_DEV ip=${IP:-none}"
exec switch_root /newroot $TOOLS/bin/aenv-init \
  $TOOLS/node/lib/ld-linux-x86-64.so.2 --library-path $TOOLS/node/lib \
  $TOOLS/node/bin/node $TOOLS/envd/envd.mjs --port 49983 --set-clock
