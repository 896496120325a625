/**
 * QEMU as an unprivileged user under its own seccomp filter, with a real
 * guest under TCG (no network device: this host's /dev/net/tun is
 * root-only, see docs/vmm.md): boot → snapshot → restore (copy-on-write
 * through the preloaded interposer) → snapshot of the restored VM (RAM
 * diff) → restore of that, checking the process credentials and the
 * ownership of snapshot files.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { QemuDriver, hostCpuKhz, qemuVersion, type DriveSpec, type Vm } from '../src/index.js';
import { writeEnvdStandIn, STAND_IN_READY } from './fixtures/envd-stand-in.js';
import { guestArtifacts, type TestGuestArtifacts } from './fixtures/guest-artifacts.js';

const run = promisify(execFile);
const USER = { uid: 65534, gid: 65534 };

describe('QEMU as an unprivileged user, under seccomp', { timeout: 300_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'aenv-vmm-priv-'));
  const cacheDir = process.env.AENV_TEST_CACHE ?? join(work, 'cache');
  const standIn = await writeEnvdStandIn(join(work, 'envd-stand-in'));
  const guest = await guestArtifacts(cacheDir, standIn.dir);
  const skip = typeof guest === 'string' ? guest : false;
  const art = guest as TestGuestArtifacts;
  const vms: Vm[] = [];

  after(async () => {
    for (const vm of vms) await vm.stop({ graceMs: 0 }).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  });

  it(
    'boots, snapshots and restores with no capabilities and a seccomp filter',
    { skip },
    async () => {
      const cpuKhz = await hostCpuKhz();
      const driver = new QemuDriver({
        mode: 'tcg',
        vmmVersion: await qemuVersion('qemu-system-x86_64'),
        ...(cpuKhz === undefined ? {} : { cpuKhz }),
        user: USER,
        helperDir: join(work, 'helpers'),
      });
      // QEMU's user must reach its run directories, drive and boot files
      await chmod(work, 0o755);
      const disk = join(work, 'rootfs.qcow2');
      await run('qemu-img', [
        'create',
        '-q',
        '-f',
        'qcow2',
        '-b',
        art.baseImage,
        '-F',
        'raw',
        disk,
      ]);
      await chown(disk, USER.uid, USER.gid);
      const drives: DriveSpec[] = [
        { id: 'rootfs', source: { kind: 'file', path: disk, format: 'qcow2' }, readOnly: false },
        {
          id: 'tools',
          source: { kind: 'file', path: art.toolsImage, format: 'raw' },
          readOnly: true,
        },
      ];
      const vm = await driver.boot({
        id: 'priv-boot',
        vcpus: 1,
        memoryMiB: 256,
        kernel: art.kernel,
        initrd: art.initrd,
        drives,
        runDir: join(work, 'run-boot'),
      });
      vms.push(vm);
      const status = await readFile(`/proc/${vm.pid}/status`, 'utf8');
      assert.match(status, /^Uid:\s+65534\s+65534\s+65534\s+65534$/m);
      assert.match(status, /^Groups:\s*$/m);
      assert.match(status, /^CapEff:\s+0+$/m);
      assert.match(status, /^NoNewPrivs:\s+1$/m);
      assert.match(status, /^Seccomp:\s+2$/m, 'QEMU runs under its seccomp filter');
      assert.equal((await stat(join(work, 'run-boot'))).mode & 0o777, 0o700);
      await vm.waitForConsole(new RegExp(STAND_IN_READY), { timeoutMs: 90_000 });
      await vm.pause();
      await vm.snapshot({ dir: join(work, 'snap') });
      const base = await stat(join(work, 'snap', 'memory'));
      assert.deepEqual([base.uid, base.gid, base.mode & 0o777], [0, USER.gid, 0o440]);
      const restored = await driver.restore(
        { dir: join(work, 'snap') },
        { id: 'priv-r1', drives, runDir: join(work, 'run-r1') },
      );
      vms.push(restored);
      assert.match(await readFile(`/proc/${restored.pid}/status`, 'utf8'), /^Seccomp:\s+2$/m);
      await new Promise((r) => setTimeout(r, 500));
      await restored.pause();
      const diff = await restored.snapshot({ dir: join(work, 'snap-diff') });
      assert.ok((diff.memory.diff?.pages ?? 0) > 0, 'the guest ran on and changed pages');
      const again = await driver.restore(
        { dir: join(work, 'snap-diff') },
        { id: 'priv-r2', drives, runDir: join(work, 'run-r2') },
      );
      vms.push(again);
      assert.equal(again.state, 'running');
      assert.equal((await again.stop()).reason, 'stop');
    },
  );
});
