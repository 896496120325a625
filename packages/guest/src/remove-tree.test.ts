import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mountsBelow, removeTree } from './remove-tree.js';

describe('mountsBelow', () => {
  it('lists mounts at or below a directory, deepest first, unescaping spaces', () => {
    const mounts =
      'proc /proc proc rw 0 0\nx /w/root/proc proc rw 0 0\nx /w/root/dev/pts devpts rw 0 0\nx /w/rootfs tmpfs rw 0 0\nx /w/a\\040b tmpfs rw 0 0\n';
    assert.deepEqual(mountsBelow(mounts, '/w/root'), ['/w/root/dev/pts', '/w/root/proc']);
    assert.deepEqual(mountsBelow(mounts, '/w/a b'), ['/w/a b']);
  });
});

describe(
  'removeTree',
  { skip: process.getuid?.() !== 0 ? 'needs root to mount a tmpfs' : false },
  () => {
    let dir = '';
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'aenv-rmtree-'));
    });
    after(async () => {
      execFileSync('sh', [
        '-c',
        `grep -q " ${dir}/" /proc/self/mounts && umount -l ${dir}/work/mnt || true`,
      ]);
      await rm(dir, { recursive: true, force: true });
    });

    it('unmounts what is mounted inside (a real tmpfs) before deleting', async () => {
      const work = join(dir, 'work');
      await mkdir(join(work, 'mnt'), { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', join(work, 'mnt')]);
      await writeFile(join(work, 'mnt/file'), 'x');
      await removeTree(work);
      await assert.rejects(access(work));
      assert.ok(!(await readFile('/proc/self/mounts', 'utf8')).includes(work));
    });
  },
);
