import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RestoreSpec } from '../driver.js';
import { sealManifest, type SnapshotManifest } from '../snapshot-manifest.js';
import { checkFcCompatible } from './restore-check.js';

const manifest: SnapshotManifest = sealManifest({
  magic: 'aenv-vm-snapshot',
  formatVersion: 1,
  createdAt: '2025-01-01T00:00:00.000Z',
  vmId: 'src',
  driver: 'firecracker',
  mode: 'kvm',
  vmmVersion: 'Firecracker v1.16.1',
  machine: { vcpus: 1, memoryMiB: 128, cpuModel: 'host' },
  boot: { kernel: '/k', initrd: null, cmdline: '' },
  drives: [{ id: 'rootfs', readOnly: false }],
  network: { mac: '02:00:00:00:00:01' },
  memory: { file: 'memory', bytes: 128 << 20 },
  state: { file: 'vmstate', bytes: 10 },
  vmm: {
    drivePaths: 'fd',
    snapshotType: 'Full',
    parent: '',
    vsockCid: 0,
    balloon: true,
    entropy: true,
  },
});
const spec: RestoreSpec = {
  id: 'c',
  runDir: '/r',
  drives: [{ id: 'rootfs', source: { kind: 'file', path: '/d', format: 'raw' }, readOnly: false }],
  network: { tap: 'tap0', mac: '02:00:00:00:00:01' },
};
const host = { vmmVersion: 'Firecracker v1.16.1', drivePaths: 'fd' as const };
const refused = (re: RegExp) => (e: Error & { code?: string }) =>
  e.code === 'VMM_SNAPSHOT_INCOMPATIBLE' && re.test(e.message);

describe('checkFcCompatible', () => {
  it('accepts a matching snapshot (MAC case aside)', () => {
    checkFcCompatible(
      manifest,
      '/s',
      { ...spec, network: { tap: 't', mac: '02:00:00:00:00:01'.toUpperCase() } },
      host,
    );
  });

  it('refuses another driver, mode, version or drive-path scheme', () => {
    assert.throws(
      () => checkFcCompatible({ ...manifest, driver: 'qemu' }, '/s', spec, host),
      refused(/qemu driver/),
    );
    assert.throws(
      () => checkFcCompatible({ ...manifest, mode: 'tcg' }, '/s', spec, host),
      refused(/under tcg/),
    );
    assert.throws(
      () => checkFcCompatible(manifest, '/s', spec, { ...host, vmmVersion: 'Firecracker v1.17.0' }),
      refused(/v1\.16\.1, this host has/),
    );
    assert.throws(
      () => checkFcCompatible(manifest, '/s', spec, { ...host, drivePaths: 'jail' }),
      refused(/without the jailer and this driver runs under the jailer/),
    );
  });

  it('refuses another drive set or network', () => {
    assert.throws(
      () => checkFcCompatible(manifest, '/s', { ...spec, drives: [] }, host),
      refused(/needs drives \[rootfs\]/),
    );
    assert.throws(
      () =>
        checkFcCompatible(
          manifest,
          '/s',
          { ...spec, drives: [{ ...spec.drives[0]!, readOnly: true }] },
          host,
        ),
      refused(/rootfs:ro/),
    );
    const { network: _n, ...noNet } = spec;
    assert.throws(
      () => checkFcCompatible(manifest, '/s', noNet, host),
      refused(/needs a network device/),
    );
    assert.throws(
      () =>
        checkFcCompatible(
          manifest,
          '/s',
          { ...spec, network: { tap: 't', mac: '02:00:00:00:00:02' } },
          host,
        ),
      refused(/its MAC is/),
    );
  });
});
