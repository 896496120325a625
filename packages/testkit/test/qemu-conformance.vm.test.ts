// The VMM driver conformance suite for the qemu driver (TCG on this
// project's machines), with the real guest artifacts and the real envd,
// qcow2 overlays as disks and one tap network per VM. The qemu driver
// deviates from nothing: its skip list is empty.
import { loadConfig } from '@aenv/shared';
import { createVmmDriver, vmmConfigSchema } from '@aenv/vmm';
import {
  TapNetworks,
  qcow2Disks,
  qemuVmSkipReason,
  runVmmDriverSuite,
  testGuestArtifacts,
} from '../src/index.js';

let artifacts: Awaited<ReturnType<typeof testGuestArtifacts>> | undefined;

runVmmDriverSuite({
  name: 'qemu',
  unavailable: async () => {
    const host = await qemuVmSkipReason();
    if (host !== undefined) return host;
    artifacts = await testGuestArtifacts();
    return typeof artifacts === 'string' ? artifacts : undefined;
  },
  createDriver: async () => {
    const config = loadConfig(vmmConfigSchema, { env: { AENV_VMM_DRIVER: 'qemu' } });
    return (await createVmmDriver(config)).driver;
  },
  guest: (workDir) => {
    const a = artifacts as Exclude<typeof artifacts, string | undefined>;
    const networks = new TapNetworks(`${workDir}/net`, `tkq${process.pid}`);
    return Promise.resolve({
      kernel: a.kernel,
      initrd: a.initrd,
      toolsImage: a.toolsImage,
      driveIds: a.driveIds,
      disks: qcow2Disks(`${workDir}/disks`, a.baseImage),
      network: networks.factory,
      close: () => networks.close(),
    });
  },
  skip: [],
});
