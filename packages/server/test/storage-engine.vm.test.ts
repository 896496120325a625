// A real guest on the storage engine: a node (real microVMs, real slots) boots
// a sandbox whose rootfs is an NBD export of the base layer with an upper in
// the sandbox directory; the e2b SDK writes files through envd; the disk is
// sealed while the guest runs with its file system frozen (`fsfreeze`: the
// journal is flushed and the file system marked clean), and the guest thaws
// and continues on the fresh upper; it is sealed again once the file system
// is quiesced for good (emergency read-only remount); the sandbox is killed
// (its upper and export must be gone); both sealed stacks, read back from the
// blob store, export to raw files that `e2fsck -fn` finds clean and that hold
// the files written before each seal (`debugfs -R cat`).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Sandbox } from 'e2b';
import { createBlobStore, exportRawImage, ImageDevice, type ImageSpec } from '@aenv/storage';
import { UPPER_DIR_NAME } from '../src/index.js';
import { startTestNode, type TestNode } from './node-harness.js';

const exec = promisify(execFile);
let t: TestNode;

before(async () => {
  t = await startTestNode();
});

after(async () => {
  await t?.close();
});

async function exportStack(image: Required<ImageSpec>, path: string): Promise<void> {
  const store = createBlobStore(t.node.storage.settings.store);
  const device = await ImageDevice.open({ image, store });
  try {
    await exportRawImage(device, path);
  } finally {
    await device.close();
    await store.close?.();
  }
}

/** Exports the stack, asserts `e2fsck -fn` is clean, and returns a file reader. */
async function checkedExport(image: Required<ImageSpec>, raw: string) {
  await exportStack(image, raw);
  const fsck = await exec('e2fsck', ['-fn', raw]).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      out: err.stdout + err.stderr,
    }),
  );
  assert.equal(fsck.code, 0, `e2fsck -fn ${raw} found problems:\n${fsck.out}`);
  return async (path: string) => (await exec('debugfs', ['-R', `cat ${path}`, raw])).stdout;
}

describe('a guest on the storage engine (real microVM)', { timeout: 600_000 }, () => {
  it('boots from the engine; writes survive seals and export; e2fsck is clean', async () => {
    const sbx = await Sandbox.create('base', { ...t.sdk, timeoutMs: 300_000 });
    const id = sbx.sandboxId;
    const root = { user: 'root' as const };
    let frozen: Required<ImageSpec>;
    let sealed: Required<ImageSpec>;
    try {
      const disk = t.node.storage.disk(id);
      assert.ok(disk, 'the sandbox has an engine disk');
      assert.equal(disk.source.kind, 'nbd');
      const below = disk.image.layers.length; // the template's layers
      assert.ok(existsSync(join(t.home, 'sandboxes', id, UPPER_DIR_NAME)));
      const mounts = await sbx.commands.run('grep " / " /proc/mounts; cat /sys/block/vda/serial');
      assert.match(mounts.stdout, /^\/dev\/vda \/ ext4 rw/m, 'the rootfs is the engine disk');
      assert.match(mounts.stdout, /^rootfs$/m);

      await sbx.files.write('/home/user/before-seal.txt', 'written before the seal');
      await sbx.commands.run('sync && fsfreeze --freeze /', root);
      const first = await disk
        .seal()
        .finally(() => sbx.commands.run('fsfreeze --unfreeze /', { ...root, timeoutMs: 30_000 }));
      assert.equal(
        first.image.layers.length,
        below + 1,
        "the template's layers + the sealed upper",
      );
      frozen = first.image;
      await sbx.files.write('/home/user/after-seal.txt', 'written on the fresh upper');
      assert.equal(await sbx.files.read('/home/user/before-seal.txt'), 'written before the seal');

      const quiesce = await sbx.commands.run(
        'sync; echo u > /proc/sysrq-trigger; for i in $(seq 50); do grep -q " / ext4 ro" /proc/mounts && break; sleep 0.2; done; grep " / " /proc/mounts',
        root,
      );
      assert.match(quiesce.stdout, / \/ ext4 ro/, 'the root file system is read-only now');
      const last = await disk.seal();
      assert.equal(last.image.layers.length, below + 2);
      sealed = last.image;
    } finally {
      assert.equal(await sbx.kill(), true);
    }
    assert.equal(t.node.storage.disk(id), undefined, 'the disk is closed');
    assert.equal((await t.node.storage.stats()).exports[id], undefined, 'the export is gone');
    assert.equal(existsSync(join(t.home, 'sandboxes', id)), false, 'the upper is gone');
    assert.equal(existsSync(join(t.home, 'nbd', `${id}.sock`)), false, 'the socket is gone');

    const work = await mkdtemp(join(tmpdir(), 'aenv-engine-export-'));
    try {
      const early = await checkedExport(frozen, join(work, 'frozen.raw'));
      assert.equal(await early('/home/user/before-seal.txt'), 'written before the seal');
      assert.equal(await early('/home/user/after-seal.txt'), '', 'not yet written');
      const late = await checkedExport(sealed, join(work, 'final.raw'));
      assert.equal(await late('/home/user/before-seal.txt'), 'written before the seal');
      assert.equal(await late('/home/user/after-seal.txt'), 'written on the fresh upper');
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
