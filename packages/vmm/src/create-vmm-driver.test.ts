import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '@aenv/shared';
import { vmmConfigSchema } from './config.js';
import {
  createVmmDriver,
  parseQemuUser,
  selectDriver,
  type DriverFacts,
} from './create-vmm-driver.js';

const pvm = {
  usable: false,
  reason: '/dev/kvm is PVM-only (kvm_pvm): stock guest kernels cannot run',
};
const hw = { usable: true, reason: 'hardware KVM (kvm_intel)' };
const base: DriverFacts = {
  requested: 'auto',
  accel: 'auto',
  firecrackerFound: false,
  kvm: pvm,
  implemented: ['qemu'],
};

describe('selectDriver', () => {
  it('auto on a PVM-only host: qemu under TCG, saying why', () => {
    const c = selectDriver(base);
    assert.equal(c.kind, 'qemu');
    assert.equal(c.mode, 'tcg');
    assert.match(c.reason, /PVM-only/);
  });

  it('auto with hardware KVM: qemu under KVM while firecracker is not built in', () => {
    assert.deepEqual(
      [
        selectDriver({ ...base, kvm: hw, firecrackerFound: true }).kind,
        selectDriver({ ...base, kvm: hw }).mode,
      ],
      ['qemu', 'kvm'],
    );
  });

  it('auto picks firecracker only with its binary, hardware KVM and the driver built in', () => {
    const facts: DriverFacts = {
      ...base,
      kvm: hw,
      firecrackerFound: true,
      implemented: ['qemu', 'firecracker'],
    };
    assert.equal(selectDriver(facts).kind, 'firecracker');
    assert.equal(selectDriver({ ...facts, firecrackerFound: false }).kind, 'qemu');
    assert.equal(selectDriver({ ...facts, kvm: pvm }).kind, 'qemu');
  });

  it('honours accel overrides, and refuses to force an unusable KVM', () => {
    assert.equal(selectDriver({ ...base, kvm: hw, accel: 'tcg' }).mode, 'tcg');
    assert.throws(
      () => selectDriver({ ...base, accel: 'kvm' }),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_DRIVER_UNAVAILABLE' && /PVM-only/.test(e.message),
    );
  });

  it('firecracker requested: NotSupported in this build, naming the driver', () => {
    assert.throws(
      () => selectDriver({ ...base, requested: 'firecracker' }),
      (e: Error & { code?: string; category?: string }) =>
        e.code === 'VMM_NOT_SUPPORTED' &&
        e.category === 'NotSupported' &&
        /firecracker driver/.test(e.message),
    );
    assert.throws(
      () =>
        selectDriver({ ...base, requested: 'firecracker', implemented: ['qemu', 'firecracker'] }),
      (e: Error & { code?: string }) => e.code === 'VMM_DRIVER_UNAVAILABLE',
    );
  });
});

describe('vmmConfigSchema', () => {
  it('defaults to auto/auto and reads overrides from the environment', () => {
    assert.equal(loadConfig(vmmConfigSchema, { env: {} }).driver, 'auto');
    const c = loadConfig(vmmConfigSchema, {
      env: { AENV_VMM_ACCEL: 'tcg', AENV_VMM_CPU_KHZ: '2000000' },
    });
    assert.equal(c.accel, 'tcg');
    assert.equal(c.cpuKhz, 2_000_000);
    assert.throws(
      () => loadConfig(vmmConfigSchema, { env: { AENV_VMM_DRIVER: 'xen' } }),
      /one of 'auto', 'qemu', 'firecracker'/,
    );
  });
});

describe('qemu user, sandbox, balloon and guest kernel settings', () => {
  it('defaults to QEMU as the daemon user, under seccomp, with a balloon and the artifacts kernel', () => {
    const c = loadConfig(vmmConfigSchema, { env: {} });
    assert.deepEqual(
      [c.qemuUser, c.qemuSandbox, c.qemuBalloon, c.guestKernel, c.guestInitrd, c.kvmPvm],
      ['', true, true, undefined, undefined, false],
    );
    const set = loadConfig(vmmConfigSchema, {
      env: {
        AENV_QEMU_USER: '900:901',
        AENV_GUEST_KERNEL: '/k/pvm-vmlinux',
        AENV_QEMU_BALLOON: 'off',
      },
    });
    assert.equal(set.guestKernel, '/k/pvm-vmlinux');
    assert.equal(set.qemuBalloon, false);
    assert.deepEqual(parseQemuUser(set.qemuUser), { uid: 900, gid: 901 });
  });

  it('parses uid:gid or a bare uid, and refuses root and anything else', () => {
    assert.equal(parseQemuUser(''), undefined);
    assert.deepEqual(parseQemuUser('65534'), { uid: 65534, gid: 65534 });
    for (const bad of ['0', '0:0', 'nobody', '1:x', '-1', '1:2:3']) {
      assert.throws(() => parseQemuUser(bad), /vmm.qemuUser must be/, bad);
    }
  });

  it('refuses kvmPvm without a guest kernel', async () => {
    await assert.rejects(
      createVmmDriver(loadConfig(vmmConfigSchema, { env: { AENV_VMM_KVM_PVM: 'true' } })),
      /kvmPvm needs vmm.guestKernel/,
    );
  });
});
