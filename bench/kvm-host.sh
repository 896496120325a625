#!/usr/bin/env bash
# Runs the benchmark suite on a host with hardware KVM and packs the results,
# for the days such a host is available (this project's own machines have a
# PVM-only /dev/kvm, so everything there runs under TCG).
#
#   sudo bench/kvm-host.sh [extra run-all options, e.g. --only create,fork]
#
# Self-contained on a Debian/Ubuntu host with root: installs what the repo
# needs (scripts/setup.sh: apt packages, npm ci, build) plus the peers
# (crun, runsc), refuses to run without hardware KVM (kvm_intel/kvm_amd and a
# read-write /dev/kvm), then
#   1. runs `npm run bench` with the qemu driver forced to KVM
#      (AENV_VMM_DRIVER=qemu AENV_VMM_ACCEL=kvm);
#   2. when AENV_FIRECRACKER_BIN names a firecracker binary, runs the node
#      benchmarks again with the firecracker driver (the vmm-* benchmarks
#      drive QEMU directly and are skipped there);
# and packs the results files and the host description into
# aenv-bench-kvm-<date>-<host>.tar.gz in the current directory. Results from
# different hosts are never compared as absolute numbers: each file records
# its machine (bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "kvm-host.sh: needs root (network namespaces, nftables, KVM)" >&2
  exit 2
fi
if ! { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; } || ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
  echo "kvm-host.sh: no hardware KVM here (kvm_intel/kvm_amd and a read-write /dev/kvm); run npm run bench instead" >&2
  exit 2
fi

scripts/setup.sh
# The peers the suite runs side by side (bench/peers.mjs skips a missing one).
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends crun runsc || \
  echo "kvm-host.sh: crun/runsc could not be installed; bench/peers.mjs will say so" >&2

stamp="$(date -u +%Y-%m-%d)-$(hostname -s)"
out="bench/results/kvm-host-${stamp}"
mkdir -p "$out"
{
  echo "# host"
  uname -a
  grep -m1 'model name' /proc/cpuinfo || true
  nproc
  free -g
  qemu-system-x86_64 --version | head -1
  if [ -n "${AENV_FIRECRACKER_BIN:-}" ]; then "$AENV_FIRECRACKER_BIN" --version | head -1; fi
} > "$out/host.txt" 2>&1

status=0
AENV_VMM_DRIVER=qemu AENV_VMM_ACCEL=kvm npm run bench --silent -- --out-dir "$out" "$@" \
  | tee "$out/qemu-kvm.txt" || status=$?

if [ -n "${AENV_FIRECRACKER_BIN:-}" ]; then
  AENV_VMM_DRIVER=firecracker AENV_FIRECRACKER_BINARY="$AENV_FIRECRACKER_BIN" \
    npm run bench --silent -- --out-dir "$out" \
    --skip vmm-snapshot-cost,vmm-clone-fanout,vmm-balloon,vmm-boot-vs-restore "$@" \
    | tee "$out/firecracker.txt" || status=$?
else
  echo "kvm-host.sh: AENV_FIRECRACKER_BIN is not set: firecracker not benchmarked" | tee "$out/firecracker.txt"
fi

tarball="aenv-bench-kvm-${stamp}.tar.gz"
tar czf "$tarball" "$out"
echo "kvm-host.sh: results in $out, packed into $tarball (exit $status)"
exit "$status"
