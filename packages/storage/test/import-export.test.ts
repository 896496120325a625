// Import of an ext4 image as a base layer (zero blocks skipped), changes
// made with real filesystem tools written through the NBD server, seal,
// export of the stack to a raw file, and `e2fsck -fn` on the result; plus
// the layer inspection used by `aenv debug layer inspect`.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FsBlobStore } from '../src/blob/fs-blob-store.js';
import { ImageDevice } from '../src/image/image-device.js';
import { formatLayerInspection, inspectLayer } from '../src/layer/inspect-layer.js';
import { NbdServer } from '../src/nbd/nbd-server.js';
import { nbdUnixUri } from '../src/nbd/protocol.js';
import { exportRawImage } from '../src/transfer/export-raw.js';
import { importRawImage, type ImportResult } from '../src/transfer/import-raw.js';
import { Prng } from './helpers/prng.js';
import { run, runOk } from './helpers/run.js';
import { tempDir, type TempDir } from './helpers/tmp.js';

const missing =
  (await run('mkfs.ext4', ['-V'])).code !== 0 ? 'e2fsprogs is not installed' : undefined;

describe('import, write through NBD, seal, export, e2fsck', { skip: missing }, () => {
  let dir: TempDir;
  let store: FsBlobStore;
  let imported: ImportResult;
  const ext4 = () => join(dir.path, 'base.ext4');

  before(async () => {
    dir = await tempDir();
    store = new FsBlobStore(join(dir.path, 'store'));
    const tree = join(dir.path, 'tree');
    await mkdir(join(tree, 'etc'), { recursive: true });
    await writeFile(join(tree, 'etc', 'hostname'), 'aenv\n');
    await writeFile(join(tree, 'blob.bin'), new Prng(3).bytes(3 << 20));
    await runOk('mkfs.ext4', ['-q', '-F', '-d', tree, '-L', 'base', ext4(), '64M']);
    imported = await importRawImage(ext4(), { store, workDir: dir.path });
  });

  after(async () => dir?.remove());

  it('imports only the non-zero blocks', () => {
    assert.equal(imported.image.virtualSize, 64 << 20);
    assert.ok(imported.dataBytes > 3 << 20, 'the file data is there');
    assert.ok(imported.dataBytes < 16 << 20, `only used blocks are stored (${imported.dataBytes})`);
    assert.equal(imported.dataBytes + imported.skippedBytes, 64 << 20);
  });

  it('inspects a layer as JSON and as text', async () => {
    const info = await inspectLayer(store, imported.digest, { maxExtents: 4 });
    assert.equal(info.digest, imported.digest);
    assert.equal(info.dataBytes, imported.dataBytes);
    assert.equal(info.extents.length, 4);
    assert.equal(info.extentsTruncated, true);
    assert.deepEqual(JSON.parse(JSON.stringify(info)), info);
    const text = formatLayerInspection(info);
    assert.ok(text.includes(imported.digest));
    assert.match(text, /virtual size 64\.0 MiB/);
  });

  it('filesystem changes written over NBD survive seal and export, and fsck is clean', async () => {
    // Change the filesystem with debugfs on a copy, then write the copy through NBD.
    const changed = join(dir.path, 'changed.ext4');
    await runOk('cp', ['--sparse=always', ext4(), changed]);
    await writeFile(join(dir.path, 'note.txt'), 'written through the engine\n');
    await runOk('debugfs', ['-w', '-R', `write ${join(dir.path, 'note.txt')} note.txt`, changed]);
    await runOk('debugfs', ['-w', '-R', 'rm blob.bin', changed]);

    const server = await NbdServer.start({ socketDir: join(dir.path, 'sock') });
    let sealedImage;
    try {
      const socket = await server.addExport('fs', {
        image: imported.image,
        store: { kind: 'fs', root: store.root },
        upper: { dir: join(dir.path, 'upper') },
      });
      await runOk('qemu-img', [
        'convert',
        '-n',
        '-f',
        'raw',
        '-O',
        'raw',
        changed,
        nbdUnixUri(socket, 'fs'),
      ]);
      sealedImage = (await server.sealExport('fs', { compression: 'deflate' })).image;
    } finally {
      await server.close();
    }

    const child = await ImageDevice.open({ image: sealedImage, store });
    const out = join(dir.path, 'exported.raw');
    try {
      await exportRawImage(child, out);
    } finally {
      await child.close();
    }
    const fsck = await run('e2fsck', ['-fn', out]);
    assert.equal(fsck.code, 0, fsck.stdout + fsck.stderr);
    const cat = await runOk('debugfs', ['-R', 'cat note.txt', out]);
    assert.match(cat, /written through the engine/);
    const cmp = await run('qemu-img', ['compare', '-f', 'raw', '-F', 'raw', changed, out]);
    assert.equal(cmp.code, 0, cmp.stdout);
  });
});
