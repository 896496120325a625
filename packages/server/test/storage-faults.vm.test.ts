// Storage faults on a real node (real microVMs under QEMU, real slots), its
// $AENV_HOME on a small ext4 this suite loop-mounts and its layers in a real S3
// server (s3rver) behind a forwarder the suite can cut. One node, one base
// template, one long-lived sandbox for every step:
// - guest disk full: an envd upload into a full guest file system is 507
//   through the proxy (the e2b SDK's NotEnoughSpaceError);
// - host disk full: create answers 507 STORAGE_NO_SPACE and leaves nothing;
//   pause answers 507 and the sandbox keeps running (files read back
//   byte-identical, commands run); once space is freed, pause and resume
//   keep the data;
// - blob store down: a create of cached layers still works, the running
//   sandbox keeps working, pause (a seal into the store) answers 503
//   BLOB_STORE_UNAVAILABLE fast; when the store is back, pause works again.
// Not here: a guest write the host upper cannot hold. Guest RAM is a shared
// file under $AENV_HOME, so a guest that touches new pages on a full disk
// dies of SIGBUS first (docs/security.md, known gaps); the NBD answer itself
// (ENOSPC) is proven in packages/storage/test/no-space.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NotEnoughSpaceError, Sandbox } from 'e2b';
import S3rver from 's3rver';
import {
  mountSmallFs,
  smallFsSkip,
  startOutageProxy,
  type OutageProxy,
  type SmallFs,
} from '@aenv/storage/testing';
import { assertNothingLeft, startTestNode, type TestNode } from './node-harness.js';

const BUCKET = 'aenv-faults';
const TIMEOUT = 600_000;

let work: string;
let fs: SmallFs;
let s3: S3rver;
let proxy: OutageProxy;
let t: TestNode;

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.sdk.apiUrl}${path}`, {
    method,
    headers: { 'x-api-key': t.sdk.apiKey, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? {} : (JSON.parse(text) as { error_code?: string }),
  };
}

async function sandboxDirs(): Promise<string[]> {
  return readdir(join(fs.path, 'sandboxes')).catch(() => []);
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'aenv-faults-vm-'));
  // ext4, not tmpfs: tmpfs allocates a page even to read a hole of a mapped
  // file, so a guest whose RAM file is there would die of SIGBUS on a full disk.
  fs = await mountSmallFs(join(work, 'home'), 2048, 'ext4');
  await mkdir(join(work, 's3'));
  s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: join(work, 's3'),
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const { port } = await s3.run();
  proxy = await startOutageProxy(`http://127.0.0.1:${port}`);
  t = await startTestNode({
    AENV_HOME: fs.path,
    // No prepared restores: each create must make its own disk (and it is faster here).
    AENV_POOL_LOW: '0',
    AENV_POOL_HIGH: '0',
    AENV_STORAGE_BLOB_STORE: 's3',
    AENV_STORAGE_S3_BUCKET: BUCKET,
    AENV_STORAGE_S3_ENDPOINT: proxy.endpoint,
    AENV_STORAGE_S3_ACCESS_KEY_ID: 'S3RVER',
    AENV_STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
  });
});

after(async () => {
  try {
    await fs?.free();
    await proxy?.up();
    if (t !== undefined) {
      await t.close();
      assertNothingLeft(fs.path, t.prefix);
    }
  } finally {
    await proxy?.stop();
    const http = (s3 as unknown as { httpServer?: { closeAllConnections(): void } })?.httpServer;
    http?.closeAllConnections();
    await s3?.close();
    await fs?.remove();
    await rm(work, { recursive: true, force: true });
  }
});

describe('storage faults on a real node', { skip: smallFsSkip() }, () => {
  let sbx: Sandbox;
  const data = randomBytes(256 << 10);
  const path = '/home/user/kept.bin';
  const readsBack = async (what: string) => {
    const got = Buffer.from(await sbx.files.read(path, { format: 'bytes' }));
    assert.ok(got.equals(data), `${what}: the file reads back byte-identical`);
  };

  it('boots the long-lived sandbox', async () => {
    sbx = await Sandbox.create('base', { ...t.sdk, timeoutMs: TIMEOUT });
    await sbx.files.write(path, data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
    await sbx.commands.run('sync');
  });

  it('guest disk full: an upload is NotEnoughSpaceError (507 through the proxy)', async () => {
    await sbx.commands.run('mount -t tmpfs -o size=1m tmpfs /mnt', {
      user: 'root',
    });
    try {
      await assert.rejects(
        sbx.files.write('/mnt/too-big', new Uint8Array(4 << 20).buffer, { user: 'root' }),
        NotEnoughSpaceError,
      );
    } finally {
      await sbx.commands.run('umount /mnt', { user: 'root' }).catch(() => undefined);
    }
  });

  it('host disk full: create and pause answer 507, the sandbox lives on', async () => {
    const before = await sandboxDirs();
    await fs.fill();
    try {
      const created = await api('POST', '/sandboxes', { templateID: 'base' });
      assert.equal(created.status, 507, JSON.stringify(created.body));
      assert.equal(created.body.error_code, 'STORAGE_NO_SPACE');
      assert.deepEqual(await sandboxDirs(), before, 'the failed create left no sandbox directory');
      const paused = await api('POST', `/sandboxes/${sbx.sandboxId}/pause`);
      assert.equal(paused.status, 507, JSON.stringify(paused.body));
      assert.equal((await Sandbox.getInfo(sbx.sandboxId, t.sdk)).state, 'running');
      await readsBack('after a failed pause');
      assert.equal((await sbx.commands.run('echo alive')).stdout.trim(), 'alive');
    } finally {
      await fs.free();
    }
    assert.equal(await sbx.pause(), true, 'pause works once space is freed');
    await sbx.connect({ ...t.sdk, timeoutMs: TIMEOUT });
    await readsBack('after pause and resume');
  });

  it('blob store down: cached creates work, pause is 503, the sandbox lives on; then recovers', async () => {
    await proxy.down();
    try {
      const other = await Sandbox.create('base', { ...t.sdk, timeoutMs: TIMEOUT });
      assert.equal((await other.commands.run('echo cached')).stdout.trim(), 'cached');
      await other.kill();
      const t0 = Date.now();
      const paused = await api('POST', `/sandboxes/${sbx.sandboxId}/pause`);
      const ms = Date.now() - t0;
      assert.equal(paused.status, 503, JSON.stringify(paused.body));
      assert.equal(paused.body.error_code, 'BLOB_STORE_UNAVAILABLE');
      assert.ok(ms < 15_000, `the failed pause took ${ms} ms`);
      assert.equal((await Sandbox.getInfo(sbx.sandboxId, t.sdk)).state, 'running');
      await readsBack('during the outage');
      assert.equal((await sbx.commands.run('echo during')).stdout.trim(), 'during');
      await sbx.files.write('/home/user/during.txt', 'written during the outage');
    } finally {
      await proxy.up();
    }
    assert.equal(await sbx.pause(), true, 'pause works once the store is back');
    await sbx.connect({ ...t.sdk, timeoutMs: TIMEOUT });
    await readsBack('after the outage');
    assert.equal(await sbx.files.read('/home/user/during.txt'), 'written during the outage');
    await sbx.kill();
  });
});
