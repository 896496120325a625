import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RestoreSpec } from '../driver.js';
import { sealManifest, type SnapshotManifest } from '../snapshot-manifest.js';
import { checkCompatible, type RestoreHost } from './restore-check.js';

const manifest: SnapshotManifest = sealManifest({
  magic: 'aenv-vm-snapshot',
  formatVersion: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  vmId: 'src',
  driver: 'qemu',
  mode: 'tcg',
  vmmVersion: 'QEMU 7.2.22',
  machine: { vcpus: 1, memoryMiB: 256, cpuModel: 'default' },
  boot: { kernel: '/k', initrd: null, cmdline: '' },
  drives: [
    { id: 'rootfs', readOnly: false },
    { id: 'tools', readOnly: true },
  ],
  network: { mac: '02:00:00:00:00:02' },
  memory: { file: 'memory', bytes: 1 },
  state: { file: 'vmstate', bytes: 1 },
  vmm: {},
});
const spec: RestoreSpec = {
  id: 'c1',
  runDir: '/r',
  drives: [
    { id: 'rootfs', source: { kind: 'file', path: '/c1.qcow2', format: 'qcow2' }, readOnly: false },
    { id: 'tools', source: { kind: 'file', path: '/t', format: 'raw' }, readOnly: true },
  ],
  network: { tap: 'tap0', mac: '02:00:00:00:00:02' },
};
const host: RestoreHost = { mode: 'tcg', vmmVersion: 'QEMU 7.2.22' };

function incompatible(
  m: Partial<SnapshotManifest>,
  s: Partial<RestoreSpec>,
  h: Partial<RestoreHost>,
  re: RegExp,
): void {
  assert.throws(
    () => checkCompatible({ ...manifest, ...m }, '/snap', { ...spec, ...s }, { ...host, ...h }),
    (e: Error & { code?: string }) => e.code === 'VMM_SNAPSHOT_INCOMPATIBLE' && re.test(e.message),
  );
}

describe('checkCompatible', () => {
  it('accepts the same driver, mode, version, drives and MAC', () => {
    assert.doesNotThrow(() => checkCompatible(manifest, '/snap', spec, host));
  });

  it('refuses another driver, mode or QEMU version with a clear reason', () => {
    incompatible({ driver: 'firecracker' }, {}, {}, /taken by the firecracker driver/);
    incompatible({}, {}, { mode: 'kvm' }, /taken under tcg, this driver runs kvm/);
    incompatible(
      {},
      {},
      { vmmVersion: 'QEMU 8.2' },
      /taken with QEMU 7\.2\.22, this host has QEMU 8\.2/,
    );
  });

  it('refuses other drives or network', () => {
    incompatible({}, { drives: spec.drives.slice(0, 1) }, {}, /needs drives \[rootfs,tools:ro\]/);
    incompatible(
      {},
      { drives: [spec.drives[1], spec.drives[0]] as RestoreSpec['drives'] },
      {},
      /needs drives/,
    );
    incompatible({}, { network: undefined }, {}, /needs a network device/);
    incompatible({}, { network: { tap: 'tap0', mac: '02:00:00:00:00:03' } }, {}, /its MAC is/);
    incompatible({ network: null }, {}, {}, /has no network device/);
  });
});
