// The firecracker driver under the jailer, against STAND-INS for
// `jailer` and `firecracker` (test/firecracker/stand-in/): the jailer
// stand-in checks the jailer command line, builds the chroot directory and
// drops to the jail user; the firecracker stand-in resolves every path it
// is given inside that chroot, so a file the driver forgot to stage, or
// staged without the jail user's rights, fails as it would with the real
// jailer. Boot, Full and Diff snapshots moved out of the jail, a restore
// into a new jail, and nothing left behind. Needs root (uid switch,
// network namespace); skipped with the reason otherwise.
import assert from 'node:assert/strict';
import { access, chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DriveSpec } from '../../src/index.js';
import { FirecrackerDriver } from '../../src/firecracker/firecracker-driver.js';
import type { FirecrackerVm } from '../../src/firecracker/firecracker-vm.js';
import { createNetns, deleteNetns } from '../fixtures/netns.js';
import { installStandIns, readRequests, type StandIns } from './fixtures/stand-ins.js';

const isRoot = process.getuid?.() === 0;
const UID = 4242;
const NS = `aenvfj-${process.pid}`;
const MAC = '02:fc:00:00:00:07';

const gone = (path: string): Promise<boolean> =>
  access(path).then(
    () => false,
    () => true,
  );

describe(
  'firecracker driver under the jailer (stand-ins)',
  {
    timeout: 120_000,
    skip: isRoot ? false : 'needs root: the jailer switches user and joins a network namespace',
  },
  () => {
    let work = '';
    let fc: StandIns;
    let driver: FirecrackerDriver;
    const vms: FirecrackerVm[] = [];
    const file = (name: string) => join(work, name);
    const jailDir = (id: string) => join(work, 'jail', 'firecracker', id);
    const drives = (tag: string): DriveSpec[] => [
      {
        id: 'rootfs',
        source: { kind: 'file', path: file(`rootfs-${tag}.raw`), format: 'raw' },
        readOnly: false,
      },
      {
        id: 'tools',
        source: { kind: 'file', path: file('tools.raw'), format: 'raw' },
        readOnly: true,
      },
    ];

    before(async () => {
      work = await mkdtemp(join(tmpdir(), 'aenv-fcj-'));
      await chmod(work, 0o755); // the jail user walks the real path (the stand-in cannot chroot)
      fc = await installStandIns(work);
      await writeFile(file('vmlinux'), 'stand-in kernel');
      for (const tag of ['a', 'b'])
        await writeFile(file(`rootfs-${tag}.raw`), Buffer.alloc(1 << 20));
      await writeFile(file('tools.raw'), Buffer.alloc(1 << 20), { mode: 0o644 });
      await createNetns(NS, '10.203.0.1/30');
      driver = await FirecrackerDriver.create({
        binary: fc.firecracker,
        jailer: {
          binary: fc.jailer,
          uid: UID,
          gid: UID,
          chrootBaseDir: file('jail'),
          resourceLimits: ['no-file=2048'],
        },
        snapshotEditor: fc.snapshotEditor,
        trackDirtyPages: true,
        vsockCid: 3,
        nbdUsable: false,
      });
    });

    after(async () => {
      await Promise.all(vms.map((vm) => vm.stop({ graceMs: 0 })));
      await deleteNetns(NS);
      await rm(work, { recursive: true, force: true });
    });

    it('boots jailed, takes Full and Diff snapshots out of the jail, restores into a new jail', async () => {
      const vm = (await driver.boot({
        id: 'ja',
        vcpus: 1,
        memoryMiB: 64,
        kernel: file('vmlinux'),
        drives: drives('a'),
        network: { netns: NS, tap: 'tap0', mac: MAC },
        runDir: file('run-ja'),
      })) as FirecrackerVm;
      vms.push(vm);
      const text = await vm.waitForConsole(/booted .* uid=\d+/, { timeoutMs: 5000 });
      assert.match(text, new RegExp(`uid=${UID}`), 'Firecracker runs as the jail user');
      const root = join(jailDir('ja'), 'root');
      assert.equal(
        (await stat(join(root, 'drives/rootfs'))).ino,
        (await stat(file('rootfs-a.raw'))).ino,
        'drives are hard links',
      );
      assert.equal(
        (await stat(file('rootfs-a.raw'))).uid,
        UID,
        'a writable drive belongs to the jail user',
      );
      assert.equal(vm.vsockPath, join(root, 'vsock.sock'));
      const reqs = await readRequests(fc.requestLog);
      const bodies = (op: string) =>
        reqs.filter((r) => r.operationId === op).map((r) => r.body as Record<string, unknown>);
      assert.deepEqual(
        bodies('putGuestDriveByID').map((b) => b.path_on_host),
        ['/drives/rootfs', '/drives/tools'],
      );
      assert.equal(bodies('putGuestBootSource')[0]?.kernel_image_path, '/boot/vmlinux');
      assert.equal(bodies('putLogger')[0]?.log_path, '/firecracker.log.fifo');

      await vm.pause();
      const full = file('snap-full');
      const m = await vm.snapshot({ dir: full, after: 'pause' });
      assert.equal(m.vmm.drivePaths, 'jail');
      assert.deepEqual((await readdir(full)).sort(), ['manifest.json', 'memory', 'vmstate']);
      await vm.resume();
      await vm.pause();
      const diff = file('snap-diff');
      const d = await vm.snapshot({ dir: diff, type: 'Diff' });
      assert.equal(d.vmm.parent, full);
      assert.equal((await vm.wait()).reason, 'snapshot');
      assert.ok(await gone(jailDir('ja')), 'the jail is removed when the VM ends');

      const clone = (await driver.restore(
        { dir: diff },
        {
          id: 'jb',
          drives: drives('b'),
          network: { netns: NS, tap: 'tap0', mac: MAC },
          runDir: file('run-jb'),
        },
      )) as FirecrackerVm;
      vms.push(clone);
      await clone.waitForConsole(/restored boot=\w+ resumes=1 marker=boot-marker:/, {
        timeoutMs: 5000,
      });
      assert.equal((await clone.stop()).reason, 'stop');
      assert.ok(await gone(jailDir('jb')));
      const refused = (await readRequests(fc.requestLog)).filter(
        (r) => r.status >= 300 || r.specErrors !== undefined,
      );
      assert.deepEqual(refused, []);
    });
  },
);
