// What a killed daemon left in $AENV_HOME/sandboxes, with real processes
// standing in for VMMs (a `node` whose command line names its directory, as
// QEMU's names its run directory): a sandbox directory, a pooled machine's
// `pool-<id>` directory and a taken machine's link to it. Every process
// named by a pid file is killed, every entry removed, the link's target
// killed once; a pid file naming an unrelated process is not acted on.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { removeLeftoverSandboxes } from '../src/orchestrator/leftover-sandboxes.js';

const children: ChildProcess[] = [];

after(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** A long-running process whose command line mentions `dir`, with its pid in `dir/run/qemu.pid`. */
async function standInVmm(dir: string): Promise<ChildProcess> {
  await mkdir(join(dir, 'run'), { recursive: true });
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', join(dir, 'run')], {
    stdio: 'ignore',
  });
  children.push(child);
  await writeFile(join(dir, 'run', 'qemu.pid'), `${child.pid}\n`);
  return child;
}

const exited = (c: ChildProcess): boolean => c.exitCode !== null || c.signalCode !== null;

describe('removeLeftoverSandboxes', () => {
  it('kills and removes sandboxes, pooled machines and links to them', async () => {
    const root = await mkdtemp(join(tmpdir(), 'aenv-leftovers-'));
    try {
      const sandboxes = join(root, 'sandboxes');
      const plain = await standInVmm(join(sandboxes, 'sbx1'));
      const pooled = await standInVmm(join(sandboxes, 'pool-abc'));
      const taken = await standInVmm(join(sandboxes, 'pool-def'));
      await symlink('pool-def', join(sandboxes, 'sbx2'));
      const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
        stdio: 'ignore',
      });
      children.push(bystander);
      await mkdir(join(sandboxes, 'sbx3', 'run'), { recursive: true });
      await writeFile(join(sandboxes, 'sbx3', 'run', 'qemu.pid'), String(bystander.pid));

      const report = await removeLeftoverSandboxes(sandboxes);
      assert.deepEqual(report, { directories: 5, killed: 3 });
      assert.deepEqual(await readdir(sandboxes), []);
      await new Promise((r) => setTimeout(r, 100));
      assert.ok([plain, pooled, taken].every(exited), 'every stand-in VMM was killed');
      assert.equal(exited(bystander), false, 'a process not of that directory is left alone');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
