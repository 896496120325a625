/**
 * Files through the e2b SDK: write and read (text, bytes, streams, gzip),
 * writeFiles, list with depth, makeDir, remove, rename, exists, getInfo.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FileNotFoundError, InvalidArgumentError, type Sandbox } from 'e2b';
import { ENVD_VERSION } from '../src/index.js';
import {
  IS_ROOT,
  USER_GID,
  USER_UID,
  startFixture,
  type EnvdFixture,
} from './helpers/envd-fixture.js';

async function collect(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function streamOf(data: Buffer, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= data.length) return controller.close();
      controller.enqueue(data.subarray(offset, offset + chunk));
      offset += chunk;
    },
  });
}

describe('files through the e2b SDK', () => {
  let fx: EnvdFixture;
  let sbx: Sandbox;
  /** A sandbox that sees envd's real version (multipart uploads, version gates). */
  let real: Sandbox;
  before(async () => {
    fx = await startFixture();
    sbx = await fx.sandbox();
    real = fx.sandboxWith({ envdVersion: ENVD_VERSION });
  });
  after(() => fx.close());

  it('writes and reads text relative to home, creating parents owned by the user', async () => {
    const info = await sbx.files.write('deep/er/note.txt', 'héllo');
    assert.equal(info.path, join(fx.home, 'deep/er/note.txt'));
    assert.equal(info.name, 'note.txt');
    assert.equal(await sbx.files.read('deep/er/note.txt'), 'héllo');
    assert.equal(readFileSync(join(fx.home, 'deep/er/note.txt'), 'utf8'), 'héllo');
    if (IS_ROOT) {
      for (const p of ['deep', 'deep/er', 'deep/er/note.txt']) {
        const st = statSync(join(fx.home, p));
        assert.deepEqual([st.uid, st.gid], [USER_UID, USER_GID], p);
      }
    }
  });

  it('overwrites (truncates) an existing file', async () => {
    await sbx.files.write('over.txt', 'a long first version');
    await sbx.files.write('over.txt', 'short');
    assert.equal(await sbx.files.read('over.txt'), 'short');
  });

  it('round-trips bytes, blobs and streams, with and without gzip', async () => {
    const data = randomBytes(300_000);
    await sbx.files.write(
      'bin/a.bin',
      data.buffer.slice(data.byteOffset, data.byteOffset + data.length),
    );
    assert.deepEqual(Buffer.from(await sbx.files.read('bin/a.bin', { format: 'bytes' })), data);
    assert.deepEqual(
      Buffer.from(await (await sbx.files.read('bin/a.bin', { format: 'blob' })).arrayBuffer()),
      data,
    );
    assert.deepEqual(await collect(await sbx.files.read('bin/a.bin', { format: 'stream' })), data);
    await sbx.files.write('bin/s.bin', streamOf(data));
    assert.deepEqual(readFileSync(join(fx.home, 'bin/s.bin')), data);
    await sbx.files.write('bin/g.bin', data.toString('base64'), { gzip: true });
    assert.equal(await sbx.files.read('bin/g.bin', { gzip: true }), data.toString('base64'));
  });

  it('reads an empty file as empty', async () => {
    writeFileSync(join(fx.home, 'empty'), '');
    assert.equal(await sbx.files.read('empty'), '');
    assert.equal((await sbx.files.read('empty', { format: 'bytes' })).length, 0);
  });

  it('writes several files in one multipart request', async () => {
    for (const client of [sbx, real]) {
      const infos = await client.files.write([
        { path: 'multi/one.txt', data: 'one' },
        { path: `${fx.home}/multi/two.txt`, data: new Blob(['two']) },
      ]);
      assert.deepEqual(
        infos.map((i) => i.path),
        [join(fx.home, 'multi/one.txt'), join(fx.home, 'multi/two.txt')],
      );
      assert.equal(readFileSync(join(fx.home, 'multi/two.txt'), 'utf8'), 'two');
    }
  });

  it('lists directories to a depth, skipping nothing and sorting by name', async () => {
    mkdirSync(join(fx.home, 'tree/b/c'), { recursive: true });
    writeFileSync(join(fx.home, 'tree/a.txt'), 'a');
    writeFileSync(join(fx.home, 'tree/b/c/deep.txt'), 'deep');
    const one = await sbx.files.list('tree');
    assert.deepEqual(
      one.map((e) => [e.name, e.type]),
      [
        ['a.txt', 'file'],
        ['b', 'dir'],
      ],
    );
    const three = await sbx.files.list('tree', { depth: 3 });
    assert.deepEqual(
      three.map((e) => e.path),
      ['tree/a.txt', 'tree/b', 'tree/b/c', 'tree/b/c/deep.txt'].map((p) => join(fx.home, p)),
    );
    const file = three.find((e) => e.name === 'deep.txt');
    assert.equal(file?.size, 4);
    assert.equal(file?.permissions, '-rw-r--r--');
    assert.equal(file?.mode, 0o644);
    assert.ok(file?.modifiedTime instanceof Date);
    await assert.rejects(
      sbx.files.list('tree/a.txt'),
      (e: unknown) => e instanceof InvalidArgumentError,
    );
    await assert.rejects(
      sbx.files.list('tree/nope'),
      (e: unknown) => e instanceof FileNotFoundError,
    );
  });

  it('makes directories with parents; an existing one answers false', async () => {
    assert.equal(await sbx.files.makeDir('made/x/y'), true);
    assert.ok(statSync(join(fx.home, 'made/x/y')).isDirectory());
    assert.equal(await sbx.files.makeDir('made/x/y'), false);
    writeFileSync(join(fx.home, 'made/file'), '');
    await assert.rejects(
      sbx.files.makeDir('made/file'),
      (e: unknown) => e instanceof InvalidArgumentError,
    );
  });

  it('tells whether paths exist and describes them', async () => {
    writeFileSync(join(fx.home, 'info.txt'), 'four');
    symlinkSync(join(fx.home, 'info.txt'), join(fx.home, 'link'));
    assert.equal(await sbx.files.exists('info.txt'), true);
    assert.equal(await sbx.files.exists('nope.txt'), false);
    const file = await sbx.files.getInfo('info.txt');
    assert.deepEqual(
      [file.name, file.type, file.path, file.size],
      ['info.txt', 'file', join(fx.home, 'info.txt'), 4],
    );
    assert.equal(file.owner, IS_ROOT ? 'root' : file.owner);
    const dir = await sbx.files.getInfo(fx.home);
    assert.equal(dir.type, 'dir');
    assert.equal(dir.permissions.startsWith('d'), true);
    const link = await sbx.files.getInfo('link');
    assert.equal(link.type, 'symlink');
    assert.equal(link.symlinkTarget, join(fx.home, 'info.txt'));
    await assert.rejects(
      sbx.files.getInfo('nope.txt'),
      (e: unknown) => e instanceof FileNotFoundError,
    );
  });

  it('renames files and directories, creating the destination parents', async () => {
    await sbx.files.write('ren/src.txt', 'moved');
    const entry = await sbx.files.rename('ren/src.txt', 'ren/new/dst.txt');
    assert.equal(entry.path, join(fx.home, 'ren/new/dst.txt'));
    assert.equal(await sbx.files.read('ren/new/dst.txt'), 'moved');
    assert.equal(await sbx.files.exists('ren/src.txt'), false);
    await assert.rejects(
      sbx.files.rename('ren/missing', 'ren/x'),
      (e: unknown) => e instanceof FileNotFoundError,
    );
  });

  it('removes files and trees; a missing path is fine', async () => {
    await sbx.files.write('rm/a/b.txt', 'x');
    await sbx.files.remove('rm/a/b.txt');
    assert.equal(await sbx.files.exists('rm/a/b.txt'), false);
    await sbx.files.remove('rm');
    assert.equal(await sbx.files.exists('rm'), false);
    await sbx.files.remove('rm/never/was');
  });

  it('refuses to read a directory or a missing file with the documented errors', async () => {
    await sbx.files.makeDir('adir');
    await assert.rejects(sbx.files.read('adir'), (e: unknown) => e instanceof InvalidArgumentError);
    await assert.rejects(
      sbx.files.read('missing.txt'),
      (e: unknown) => e instanceof FileNotFoundError,
    );
    await assert.rejects(
      sbx.files.write('adir', 'x'),
      (e: unknown) => e instanceof InvalidArgumentError,
    );
  });
});
