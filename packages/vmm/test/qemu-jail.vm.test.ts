/**
 * The VMM jail with real QEMU under TCG: a booted VM and a clone restored
 * from its snapshot run at the same time, each in its own netns (its tap
 * handed over as a descriptor), as DIFFERENT non-root uids, in cgroups with
 * memory/CPU/pids limits. From inside each QEMU's mount namespace, as its
 * uid, the daemon's home (node.db, api key) and the other VM's run
 * directory are invisible; after stop the uids are free, the cgroups gone
 * and no jail mount is left on the host.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  readdir,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '@aenv/shared';
import {
  QemuDriver,
  hostCpuKhz,
  qemuJailConfig,
  qemuVersion,
  vmmConfigSchema,
  type DriveSpec,
  type QemuJailConfig,
  type Vm,
} from '../src/index.js';
import { writeEnvdStandIn, STAND_IN_READY } from './fixtures/envd-stand-in.js';
import { guestArtifacts, type TestGuestArtifacts } from './fixtures/guest-artifacts.js';
import { createNetns, deleteNetns, waitForHttp } from './fixtures/netns.js';

const run = promisify(execFile);
const PREFIX = `j${process.pid}`;
const MAC = '02:00:00:00:00:05';
const GUEST = '10.202.0.2';

async function status(pid: number): Promise<string> {
  return readFile(`/proc/${pid}/status`, 'utf8');
}

function uidOf(text: string): number {
  return Number(/^Uid:\s+(\d+)/m.exec(text)?.[1]);
}

/** Runs `script` in QEMU `pid`'s mount namespace as its uid and groups. */
async function asVmm(pid: number, script: string): Promise<string> {
  const s = await status(pid);
  const uid = uidOf(s);
  const groups = (/^Groups:\s*(.*)$/m.exec(s)?.[1] ?? '').trim().split(/\s+/).join(',');
  const { stdout } = await run('nsenter', [
    '-t',
    String(pid),
    '-m',
    '--',
    'setpriv',
    `--reuid=${uid}`,
    `--regid=${uid}`,
    `--groups=${groups}`,
    '--',
    'sh',
    '-c',
    script,
  ]);
  return stdout;
}

async function cgroupOf(pid: number, controller: string): Promise<string> {
  const lines = (await readFile(`/proc/${pid}/cgroup`, 'utf8')).split('\n');
  const line =
    lines.find((l) => l.split(':')[1]?.split(',').includes(controller)) ??
    lines.find((l) => l.startsWith('0::'));
  return (line ?? '').split(':').slice(2).join(':');
}

async function processesOf(uid: number): Promise<number> {
  let n = 0;
  for (const p of await readdir('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    const s = await status(Number(p)).catch(() => '');
    if (s !== '' && uidOf(s) === uid) n++;
  }
  return n;
}

describe('QEMU in the VMM jail', { timeout: 300_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'aenv-vmm-jail-'));
  const cacheDir = process.env.AENV_TEST_CACHE ?? join(work, 'cache');
  const standIn = await writeEnvdStandIn(join(work, 'envd-stand-in'));
  const guest = await guestArtifacts(cacheDir, standIn.dir);
  const notRoot = process.getuid?.() === 0 ? false : 'the jail needs root';
  const skip = typeof guest === 'string' ? guest : notRoot;
  const art = guest as TestGuestArtifacts;
  const home = join(work, 'home');
  const namespaces = [`aenvj-${PREFIX}-a`, `aenvj-${PREFIX}-b`];
  const vms: Vm[] = [];
  let jail: QemuJailConfig;
  let driver: QemuDriver;

  before(async () => {
    if (skip !== false) return;
    for (const ns of namespaces) await createNetns(ns, '10.202.0.1/30');
    await mkdir(join(home, 'sandboxes'), { recursive: true });
    await writeFile(join(home, 'node.db'), 'secret db');
    await writeFile(join(home, 'api-key'), 'secret key', { mode: 0o644 });
    const config = loadConfig(vmmConfigSchema, {
      env: { AENV_QEMU_HELPER_DIR: join(work, 'helpers') },
    });
    jail = (await qemuJailConfig(config, [home])).jail as QemuJailConfig;
    const cpuKhz = await hostCpuKhz();
    driver = new QemuDriver({
      mode: 'tcg',
      vmmVersion: await qemuVersion('qemu-system-x86_64'),
      ...(cpuKhz === undefined ? {} : { cpuKhz }),
      helperDir: join(work, 'helpers'),
      jail,
    });
  });

  after(async () => {
    for (const vm of vms) await vm.stop({ graceMs: 0 }).catch(() => undefined);
    for (const ns of namespaces) await deleteNetns(ns);
    await rm(work, { recursive: true, force: true });
  });

  it(
    'runs a VM and its clone as different uids, each seeing only its own files',
    { skip },
    async () => {
      const drives = (disk: string): DriveSpec[] => [
        { id: 'rootfs', source: { kind: 'file', path: disk, format: 'qcow2' }, readOnly: false },
        {
          id: 'tools',
          source: { kind: 'file', path: art.toolsImage, format: 'raw' },
          readOnly: true,
        },
      ];
      const diskA = join(home, 'sandboxes', 'a.qcow2');
      await run('qemu-img', [
        'create',
        '-q',
        '-f',
        'qcow2',
        '-b',
        art.baseImage,
        '-F',
        'raw',
        diskA,
      ]);
      const runA = join(home, 'sandboxes', 'run-a');
      const runB = join(home, 'sandboxes', 'run-b');
      const a = await driver.boot({
        id: `${PREFIX}-a`,
        vcpus: 1,
        memoryMiB: 256,
        kernel: art.kernel,
        initrd: art.initrd,
        guest: {
          hostname: 'a',
          address: `${GUEST}/30`,
          gateway: '10.202.0.1',
          dns: ['10.202.0.1'],
        },
        drives: drives(diskA),
        network: { netns: namespaces[0] as string, tap: 'tap0', mac: MAC },
        runDir: runA,
      });
      vms.push(a);
      await a.waitForConsole(new RegExp(STAND_IN_READY), { timeoutMs: 90_000 });
      await waitForHttp(namespaces[0] as string, `http://${GUEST}:49983/health`, 204, 15_000);
      await a.pause();
      const snap = join(home, 'snap');
      await a.snapshot({ dir: snap, after: 'pause' });
      const diskB = join(home, 'sandboxes', 'b.qcow2');
      await copyFile(diskA, diskB);
      await a.resume();
      const mem = await stat(join(snap, 'memory'));
      assert.deepEqual([mem.uid, mem.gid, mem.mode & 0o777], [0, jail.pool.sharedGid, 0o440]);
      const b = await driver.restore(
        { dir: snap },
        {
          id: `${PREFIX}-b`,
          drives: drives(diskB),
          network: { netns: namespaces[1] as string, tap: 'tap0', mac: MAC },
          runDir: runB,
        },
      );
      vms.push(b);
      await waitForHttp(namespaces[1] as string, `http://${GUEST}:49983/health`, 204, 15_000);

      const pa = a.pid as number;
      const pb = b.pid as number;
      const [sa, sb] = [await status(pa), await status(pb)];
      const [ua, ub] = [uidOf(sa), uidOf(sb)];
      assert.notEqual(ua, ub, 'the two VMMs run as different uids');
      for (const [s, u] of [
        [sa, ua],
        [sb, ub],
      ] as const) {
        assert.ok(
          u > jail.pool.base && u <= jail.pool.base + jail.pool.count,
          `uid ${u} is a jail uid`,
        );
        assert.match(s, new RegExp(`^Uid:\\s+${u}\\s+${u}\\s+${u}\\s+${u}$`, 'm'));
        assert.match(s, new RegExp(`^Gid:\\s+${u}\\s+${u}\\s+${u}\\s+${u}$`, 'm'));
        assert.match(s, new RegExp(`^Groups:\\s+${jail.pool.sharedGid}\\s*$`, 'm'));
        assert.match(s, /^CapEff:\s+0+$/m);
        assert.match(s, /^CapBnd:\s+0+$/m);
        assert.match(s, /^NoNewPrivs:\s+1$/m);
        assert.match(s, /^Seccomp:\s+2$/m);
      }
      assert.equal(
        await readlink(`/proc/${pa}/fd/3`),
        '/dev/net/tun',
        'the tap was handed over as fd 3',
      );
      assert.equal(
        (await stat('/dev/net/tun')).mode & 0o777,
        0o600,
        "the host's tun node is untouched",
      );

      // what B's QEMU sees, as its own uid
      const view = await asVmm(
        pb,
        [
          `ls -A ${home}`,
          `ls -A ${join(home, 'sandboxes')}`,
          `cat ${join(home, 'node.db')} 2>&1 || echo no-db`,
          `cat ${join(home, 'api-key')} 2>&1 || echo no-key`,
          `test -e ${runA} || echo no-run-a`,
          `test -S ${join(runB, 'qmp.sock')} && echo own-qmp`,
          `test -r ${diskA} || echo no-disk-a`,
          `test -w ${diskB} && echo own-disk`,
          `touch ${join(home, 'planted')} 2>/dev/null || echo home-read-only`,
        ].join('; '),
      );
      assert.deepEqual(view.trim().split('\n'), [
        'sandboxes',
        'b.qcow2',
        'run-b',
        `cat: ${join(home, 'node.db')}: No such file or directory`,
        'no-db',
        `cat: ${join(home, 'api-key')}: No such file or directory`,
        'no-key',
        'no-run-a',
        'own-qmp',
        'no-disk-a',
        'own-disk',
        'home-read-only',
      ]);
      const viewA = await asVmm(pa, `test -e ${runB} || echo no-run-b; ls -A ${tmpdir()} | wc -l`);
      assert.equal(viewA.trim().split('\n')[0], 'no-run-b');

      // the cgroup limits (v1 or v2)
      const v2 = jail.cgroups?.version === 2;
      const memDir = join('/sys/fs/cgroup', v2 ? '' : 'memory', await cgroupOf(pa, 'memory'));
      const limit = await readFile(
        join(memDir, v2 ? 'memory.max' : 'memory.limit_in_bytes'),
        'utf8',
      );
      assert.equal(Number(limit), (256 + jail.memoryOverheadMiB) * 2 ** 20);
      const pidsDir = join('/sys/fs/cgroup', v2 ? '' : 'pids', await cgroupOf(pa, 'pids'));
      assert.equal(
        (await readFile(join(pidsDir, 'pids.max'), 'utf8')).trim(),
        String(jail.pidsMax),
      );
      const cpuDir = join('/sys/fs/cgroup', v2 ? '' : 'cpu', await cgroupOf(pa, 'cpu'));
      const quota = v2
        ? (await readFile(join(cpuDir, 'cpu.max'), 'utf8')).trim()
        : (await readFile(join(cpuDir, 'cpu.cfs_quota_us'), 'utf8')).trim();
      assert.equal(quota, v2 ? '100000 100000' : '100000');
      const peakFile = join(memDir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes');
      const peak = await readFile(peakFile, 'utf8').catch(() => '');
      if (peak !== '')
        console.log(
          `# VMM memory peak (256 MiB guest, TCG): ${Math.round(Number(peak) / 2 ** 20)} MiB`,
        );

      // after stop: uids free, cgroups gone, no jail mount on the host
      await Promise.all([a.stop(), b.stop()]);
      assert.equal(jail.pool.inUse, 0);
      assert.equal(await processesOf(ua), 0);
      assert.equal(await processesOf(ub), 0);
      await assert.rejects(stat(memDir), { code: 'ENOENT' });
      await assert.rejects(stat(pidsDir), { code: 'ENOENT' });
      const mounts = await readFile('/proc/self/mountinfo', 'utf8');
      assert.ok(!mounts.includes(work), 'no jail mount is visible on the host');
    },
  );
});
