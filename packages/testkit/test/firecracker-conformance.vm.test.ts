// The VMM driver conformance suite for the firecracker driver with a REAL
// firecracker binary: runs only where Firecracker can (AENV_FIRECRACKER_BIN
// names a firecracker v1.16 binary and /dev/kvm is hardware KVM, kvm_intel
// or kvm_amd); anywhere else every case is reported skipped with the reason.
// The driver's contract against the spec-validating stand-in runs everywhere
// (packages/vmm/test/firecracker/firecracker-contract.test.ts).
//
// Deviations, written down (style R4):
// - the guest clock: Firecracker stops the vCPUs on pause but not kvm-clock
//   (it only flags the pause to the guest with KVM_KVMCLOCK_CTRL), so the
//   guest's monotonic clock jumps by the pause on resume; processes do stay
//   frozen;
// - prepared restores: `snapshot/load` maps memory and restores devices in
//   one call, so the driver answers VMM_NOT_SUPPORTED (the case checks that).
// Disks are raw copies (Firecracker takes no qcow2).
import { FirecrackerDriver, probeKvm } from '@aenv/vmm';
import {
  TapNetworks,
  VMM_SUITE_TESTS,
  rawCopyDisks,
  runVmmDriverSuite,
  tapNetworkSkipReason,
  testGuestArtifacts,
} from '../src/index.js';

const BIN = process.env.AENV_FIRECRACKER_BIN;
let artifacts: Awaited<ReturnType<typeof testGuestArtifacts>> | undefined;

async function unavailable(): Promise<string | undefined> {
  if (BIN === undefined || BIN === '')
    return 'AENV_FIRECRACKER_BIN is not set (path of a firecracker v1.16 binary)';
  const kvm = await probeKvm();
  if (!kvm.usable) return `Firecracker needs hardware KVM: ${kvm.reason}`;
  const net = await tapNetworkSkipReason();
  if (net !== undefined) return net;
  artifacts = await testGuestArtifacts();
  return typeof artifacts === 'string' ? artifacts : undefined;
}

const why = await unavailable();
if (why !== undefined) console.log(`# firecracker conformance suite skipped: ${why}`);

runVmmDriverSuite({
  name: 'firecracker',
  unavailable: () => Promise.resolve(why),
  createDriver: () => FirecrackerDriver.create({ binary: BIN as string }),
  guest: (workDir) => {
    const a = artifacts as Exclude<typeof artifacts, string | undefined>;
    const networks = new TapNetworks(`${workDir}/net`, `tkf${process.pid}`);
    return Promise.resolve({
      kernel: a.kernel,
      initrd: a.initrd,
      toolsImage: a.toolsImage,
      driveIds: a.driveIds,
      disks: rawCopyDisks(`${workDir}/disks`, a.baseImage),
      network: networks.factory,
      close: () => networks.close(),
    });
  },
  skip: [
    {
      reason:
        'Firecracker keeps kvm-clock running while the vCPUs are paused (it only sets KVM_KVMCLOCK_CTRL): the guest clock jumps by the pause on resume',
      tests: [VMM_SUITE_TESTS.clockFrozen],
    },
  ],
});
