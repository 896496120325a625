import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ArtifactStore } from '../artifact-store.js';
import type { GuestProgressEvent } from '../progress.js';
import type { KernelPackage } from './apt-kernel.js';
import { kernelInputs, prepareKernel } from './prepare-kernel.js';

describe('prepareKernel without apt (offline)', () => {
  let root = '';
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'aenv-kernel-'));
  });
  after(async () => rm(root, { recursive: true, force: true }));

  it('falls back to the cached kernel when apt cannot resolve the package', async () => {
    const store = new ArtifactStore(root);
    const pkg: KernelPackage = {
      name: 'linux-image-9.9.9-aenvtest-amd64',
      version: '9.9.9-1',
      sha256: 'ab',
      size: 1,
    };
    await store.ensure('kernel', kernelInputs(pkg), async (work) => {
      await writeFile(join(work, 'vmlinux'), 'k');
      await mkdir(join(work, 'modules'));
      await writeFile(join(work, 'modules/load-order'), 'virtio\n');
      return {
        files: ['vmlinux', 'modules/load-order'],
        meta: { release: '9.9.9-aenvtest-amd64', modules: ['virtio'], package: pkg },
      };
    });
    const events: GuestProgressEvent[] = [];
    const k = await prepareKernel(
      { store, onProgress: (e) => events.push(e) },
      { kernelPackage: pkg.name, aptUpdate: false },
    );
    assert.equal(k.release, '9.9.9-aenvtest-amd64');
    assert.deepEqual(k.package, pkg);
    assert.ok(
      events.some((e) =>
        /using the cached linux-image-9\.9\.9-aenvtest-amd64/.test(e.message ?? ''),
      ),
    );
    assert.equal(events.at(-1)?.status, 'cached');
  });

  it('fails with GUEST_KERNEL_UNAVAILABLE when nothing is cached either', async () => {
    const store = new ArtifactStore(join(root, 'empty'));
    await assert.rejects(
      prepareKernel({ store }, { kernelPackage: 'linux-image-0.0.0-nope-amd64', aptUpdate: false }),
      (e: Error & { code?: string }) => e.code === 'GUEST_KERNEL_UNAVAILABLE',
    );
  });
});
