/**
 * Tests of {@link qcow2BackingChain} on images made by `qemu-img` (skipped,
 * saying why, where it is not installed).
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { qcow2BackingChain } from './qcow2-backing.js';

const run = promisify(execFile);
const noQemuImg = await run('qemu-img', ['--version']).then(
  () => false,
  () => 'qemu-img is not installed',
);

describe('qcow2BackingChain', async () => {
  const work = await mkdtemp(join(tmpdir(), 'aenv-qcow2-'));
  after(() => rm(work, { recursive: true, force: true }));

  it('follows absolute and relative backing files to the end', { skip: noQemuImg }, async () => {
    const raw = join(work, 'base.raw');
    await writeFile(raw, Buffer.alloc(1 << 20));
    const mid = join(work, 'mid.qcow2');
    const top = join(work, 'top.qcow2');
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', raw, '-F', 'raw', mid]);
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', 'mid.qcow2', '-F', 'qcow2', top]);
    assert.deepEqual(await qcow2BackingChain(top), [mid, raw]);
    assert.deepEqual(await qcow2BackingChain(raw), []);
  });

  it('reports an unreadable image', async () => {
    await assert.rejects(qcow2BackingChain(join(work, 'missing')), { code: 'VMM_JAIL_FAILED' });
  });
});
