import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RestoreSpec } from '../driver.js';
import { fileDigest } from '../file-digest.js';
import { sealManifest, type SnapshotManifest } from '../snapshot-manifest.js';
import { checkCompatible, checkRestorable, type RestoreHost } from './restore-check.js';

const K1 = `sha256:${'1'.repeat(64)}`;
const K2 = `sha256:${'2'.repeat(64)}`;

const manifest: SnapshotManifest = sealManifest({
  magic: 'aenv-vm-snapshot',
  formatVersion: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  vmId: 'src',
  driver: 'qemu',
  mode: 'tcg',
  vmmVersion: 'QEMU 7.2.22',
  machine: { vcpus: 1, memoryMiB: 256, cpuModel: 'default' },
  boot: { kernel: '/k', initrd: null, cmdline: '', kernelDigest: K1, initrdDigest: null },
  drives: [
    { id: 'rootfs', readOnly: false },
    { id: 'tools', readOnly: true },
  ],
  network: { mac: '02:00:00:00:00:02' },
  memory: { file: 'memory', bytes: 1, baseId: 'b1' },
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

  it('refuses formats it no longer restores: RAM inline, or no kernel digest', () => {
    incompatible({ memory: { file: null, bytes: 1 } }, {}, {}, /RAM is inside the state stream/);
    incompatible({ boot: { ...manifest.boot, kernelDigest: undefined } }, {}, {}, /older aenv/);
  });

  it('refuses a snapshot of another kernel than the configured one', () => {
    const guestKernel = { kernel: '/pvm/vmlinux', kernelDigest: K2 };
    incompatible(
      {},
      {},
      { guestKernel },
      /taken with kernel sha256:1+, this driver is configured with \/pvm\/vmlinux/,
    );
    assert.doesNotThrow(() =>
      checkCompatible(manifest, '/snap', spec, {
        ...host,
        guestKernel: { ...guestKernel, kernelDigest: K1 },
      }),
    );
    incompatible(
      {},
      {},
      { guestKernel: { kernel: '/k', kernelDigest: K1, initrd: '/i', initrdDigest: K2 } },
      /taken with initrd none, this driver is configured with \/i/,
    );
  });
});

describe('checkRestorable', () => {
  let dir = '';
  let m: SnapshotManifest;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aenv-restore-check-'));
    await writeFile(join(dir, 'vmlinux'), 'kernel');
    await writeFile(join(dir, 'vmstate'), 'state');
    await writeFile(join(dir, 'memory'), Buffer.alloc(4096));
    await writeFile(join(dir, 'memory.diff'), Buffer.alloc(100));
    m = sealManifest({
      ...manifest,
      boot: {
        ...manifest.boot,
        kernel: join(dir, 'vmlinux'),
        kernelDigest: await fileDigest(join(dir, 'vmlinux')),
      },
      memory: {
        file: 'memory',
        bytes: 4096,
        baseId: 'b1',
        diff: { file: 'memory.diff', bytes: 100, pages: 0 },
      },
      state: { file: 'vmstate', bytes: 5 },
    });
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('accepts a snapshot whose files are all there, as recorded', async () => {
    await checkRestorable(m, dir, spec, host);
  });

  it('says which file is missing, short or changed', async () => {
    const rejects = (mm: SnapshotManifest, code: string, re: RegExp) =>
      assert.rejects(
        checkRestorable(mm, dir, spec, host),
        (e: Error & { code?: string }) => e.code === code && re.test(e.message),
      );
    await rejects(
      { ...m, memory: { ...m.memory, bytes: 8192 } },
      'VMM_SNAPSHOT_INVALID',
      /memory file memory is 4096, expected 8192/,
    );
    await rejects(
      { ...m, memory: { ...m.memory, diff: { file: 'memory.diff', bytes: 99, pages: 0 } } },
      'VMM_SNAPSHOT_INVALID',
      /RAM diff memory.diff is 100, expected 99/,
    );
    await rejects(
      { ...m, boot: { ...m.boot, kernel: join(dir, 'gone') } },
      'VMM_SNAPSHOT_INVALID',
      /is gone/,
    );
    await writeFile(join(dir, 'vmlinux'), 'another kernel');
    await rejects(m, 'VMM_SNAPSHOT_INCOMPATIBLE', /changed since the snapshot/);
  });
});
