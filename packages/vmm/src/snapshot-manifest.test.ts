import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  MANIFEST_FILE,
  readManifest,
  sealManifest,
  writeManifest,
  type ManifestBody,
} from './snapshot-manifest.js';

const SAMPLE_MANIFEST: ManifestBody = {
  magic: 'aenv-vm-snapshot',
  formatVersion: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  vmId: 'vm1',
  driver: 'qemu',
  mode: 'tcg',
  vmmVersion: 'QEMU emulator version 7.2.22',
  machine: { vcpus: 1, memoryMiB: 256, cpuModel: 'default' },
  boot: { kernel: '/k/vmlinux', initrd: '/k/initrd', cmdline: 'console=ttyS0' },
  drives: [
    { id: 'rootfs', readOnly: false },
    { id: 'tools', readOnly: true },
  ],
  network: { mac: '02:00:00:00:00:02' },
  memory: { file: 'memory', bytes: 268435456 },
  state: { file: 'vmstate', bytes: 60000 },
  vmm: { 'x-ignore-shared': true },
};

describe('snapshot manifest', () => {
  let root = '';
  let n = 0;
  const fresh = async (): Promise<string> => {
    const dir = join(root, String(n++));
    await mkdir(dir);
    return dir;
  };
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'aenv-manifest-'));
  });
  after(async () => rm(root, { recursive: true, force: true }));

  it('round-trips through write and read with a verified checksum', async () => {
    const dir = await fresh();
    const m = sealManifest(SAMPLE_MANIFEST);
    assert.match(m.checksum, /^sha256:[0-9a-f]{64}$/);
    await writeManifest(dir, m);
    assert.deepEqual(await readManifest(dir), m);
  });

  it('has a checksum independent of key order', () => {
    const reordered = Object.fromEntries(
      Object.entries(SAMPLE_MANIFEST).reverse(),
    ) as unknown as ManifestBody;
    assert.equal(sealManifest(reordered).checksum, sealManifest(SAMPLE_MANIFEST).checksum);
  });

  it('refuses a modified, foreign, newer, malformed, missing or oversized manifest', async () => {
    const cases: [string, (m: Record<string, unknown>) => string, RegExp][] = [
      ['tampered', (m) => JSON.stringify({ ...m, vmmVersion: 'other' }), /checksum mismatch/],
      ['foreign', (m) => JSON.stringify({ ...m, magic: 'x' }), /not an aenv VM snapshot/],
      ['newer', (m) => JSON.stringify({ ...m, formatVersion: 2 }), /format version 2/],
      [
        'malformed',
        (m) => JSON.stringify({ ...m, machine: { vcpus: 'one' } }),
        /field machine\.vcpus/,
      ],
      ['not json', () => '{', /not JSON/],
      ['oversized', () => ' '.repeat(70 * 1024), /larger than/],
    ];
    for (const [label, mutate, re] of cases) {
      const dir = await fresh();
      await writeFile(
        join(dir, MANIFEST_FILE),
        mutate(sealManifest(SAMPLE_MANIFEST) as unknown as Record<string, unknown>),
      );
      await assert.rejects(
        readManifest(dir),
        (e: Error & { code?: string }) => e.code === 'VMM_SNAPSHOT_INVALID' && re.test(e.message),
        label,
      );
    }
    await assert.rejects(readManifest(await fresh()), /no readable manifest\.json/);
  });

  it('never overwrites an existing manifest', async () => {
    const dir = await fresh();
    await writeManifest(dir, sealManifest(SAMPLE_MANIFEST));
    await writeFile(join(dir, `${MANIFEST_FILE}.tmp`), 'x');
    await assert.rejects(writeManifest(dir, sealManifest(SAMPLE_MANIFEST)), /EEXIST/);
    assert.match(await readFile(join(dir, MANIFEST_FILE), 'utf8'), /aenv-vm-snapshot/);
  });
});
