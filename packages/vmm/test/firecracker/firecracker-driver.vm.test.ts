// The firecracker driver with a REAL firecracker binary and real guests:
// boot → envd (stand-in) → pause/resume → Full snapshot → two
// copy-on-write clones that run independently → a Diff snapshot of a
// clone restored again (when snapshot-editor is given) → nothing left.
//
// Runs only where Firecracker can: AENV_FIRECRACKER_BIN names a
// firecracker v1.16 binary and /dev/kvm is hardware KVM (kvm_intel or
// kvm_amd). Optional: AENV_FIRECRACKER_SNAPSHOT_EDITOR (Diff snapshots),
// AENV_FIRECRACKER_JAILER_BIN or AENV_FIRECRACKER_JAILER (run jailed,
// each VMM as its own uid from 4243 with cgroup limits). Otherwise every
// test is skipped and the reason printed. Needs root (network namespaces).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { JailUidPool, detectCgroups, probeKvm, type DriveSpec } from '../../src/index.js';
import { FirecrackerDriver } from '../../src/firecracker/firecracker-driver.js';
import type { FirecrackerVm } from '../../src/firecracker/firecracker-vm.js';
import { STAND_IN_READY, writeEnvdStandIn } from '../fixtures/envd-stand-in.js';
import { guestArtifacts, type TestGuestArtifacts } from '../fixtures/guest-artifacts.js';
import { createNetns, deleteNetns, httpInNetns, waitForHttp } from '../fixtures/netns.js';

const run = promisify(execFile);
const BIN = process.env.AENV_FIRECRACKER_BIN;
const EDITOR = process.env.AENV_FIRECRACKER_SNAPSHOT_EDITOR;
const JAILER = process.env.AENV_FIRECRACKER_JAILER_BIN ?? process.env.AENV_FIRECRACKER_JAILER;
/** Jailed VMMs get uids 4243.. (one each), gid 4242 in common. */
const JAIL_UIDS = new JailUidPool(4242, 16);
const GUEST = '10.204.0.2';
const MAC = '02:fc:00:00:01:02';
const url = (path: string): string => `http://${GUEST}:49983${path}`;

async function why(work: string): Promise<string | false | TestGuestArtifacts> {
  if (BIN === undefined || BIN === '')
    return 'AENV_FIRECRACKER_BIN is not set (path of a firecracker v1.16 binary)';
  const kvm = await probeKvm();
  if (!kvm.usable) return `Firecracker needs hardware KVM: ${kvm.reason}`;
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, taps)';
  const standIn = await writeEnvdStandIn(join(work, 'envd-stand-in'));
  return guestArtifacts(process.env.AENV_TEST_CACHE ?? join(work, 'cache'), standIn.dir);
}

describe('firecracker driver with a real firecracker', { timeout: 600_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'aenv-fcvm-'));
  const found = await why(work);
  const skip = typeof found === 'string' ? found : false;
  if (skip !== false) console.log(`# firecracker VM suite skipped: ${skip}`);
  const art = found as TestGuestArtifacts;
  const namespaces = ['src', 'c1', 'c2', 'c3'].map((n) => `aenvfv-${process.pid}-${n}`);
  const vms: FirecrackerVm[] = [];
  let driver: FirecrackerDriver;

  const rootfs = (name: string): DriveSpec => ({
    id: 'rootfs',
    source: { kind: 'file', path: join(work, `${name}.raw`), format: 'raw' },
    readOnly: false,
  });
  const tools: DriveSpec = {
    id: 'tools',
    source: { kind: 'file', path: art?.toolsImage ?? '', format: 'raw' },
    readOnly: true,
  };
  const copy = (from: string, to: string) =>
    run('cp', ['--reflink=auto', '--sparse=always', from, join(work, `${to}.raw`)]);
  const restore = async (dir: string, name: string, ns: string): Promise<FirecrackerVm> => {
    const vm = (await driver.restore(
      { dir },
      {
        id: name,
        drives: [rootfs(name), tools],
        network: { netns: ns, tap: 'tap0', mac: MAC },
        runDir: join(work, `run-${name}`),
      },
    )) as FirecrackerVm;
    vms.push(vm);
    return vm;
  };

  before(async () => {
    if (skip !== false) return;
    for (const ns of namespaces) await createNetns(ns, '10.204.0.1/30');
    const cgroups = await detectCgroups();
    driver = await FirecrackerDriver.create({
      binary: BIN as string,
      trackDirtyPages: EDITOR !== undefined,
      ...(EDITOR === undefined ? {} : { snapshotEditor: EDITOR }),
      ...(JAILER === undefined
        ? {}
        : {
            jailer: { binary: JAILER, uid: 4242, gid: 4242, chrootBaseDir: join(work, 'jail') },
            jailUids: JAIL_UIDS,
            ...(cgroups === undefined
              ? {}
              : {
                  jailLimits: {
                    cgroupVersion: cgroups.version,
                    memoryOverheadMiB: 128,
                    cpuLimit: true,
                    pidsMax: 256,
                  },
                }),
          }),
    });
    console.log(`# ${await driver.version()}${JAILER === undefined ? '' : ' (jailed)'}`);
  });

  after(async () => {
    for (const vm of vms) await vm.stop({ graceMs: 0 }).catch(() => undefined);
    for (const ns of namespaces) await deleteNetns(ns);
    await rm(work, { recursive: true, force: true });
  });

  let snap = '';

  it('boots to envd, pauses and resumes, snapshots', { skip }, async () => {
    await copy(art.baseImage, 'src');
    const t = Date.now();
    const vm = (await driver.boot({
      id: 'src',
      vcpus: 1,
      memoryMiB: 512,
      kernel: art.kernel,
      initrd: art.initrd,
      guest: {
        hostname: 'src',
        address: `${GUEST}/30`,
        gateway: '10.204.0.1',
        dns: ['10.204.0.1'],
      },
      drives: [rootfs('src'), tools],
      network: { netns: namespaces[0] as string, tap: 'tap0', mac: MAC },
      runDir: join(work, 'run-src'),
    })) as FirecrackerVm;
    vms.push(vm);
    await vm.waitForConsole(new RegExp(STAND_IN_READY), { timeoutMs: 60_000 });
    const at = await waitForHttp(namespaces[0] as string, url('/health'), 204, 10_000);
    console.log(`# cold boot to envd (stand-in) healthy: ${at - t} ms`);
    let p = performance.now();
    await vm.pause();
    const pauseMs = performance.now() - p;
    assert.equal(
      (await httpInNetns(namespaces[0] as string, url('/health'), { timeoutMs: 300 })).status,
      0,
    );
    p = performance.now();
    await vm.resume();
    console.log(
      `# pause ${pauseMs.toFixed(2)} ms, resume ${(performance.now() - p).toFixed(2)} ms`,
    );
    console.log(`# metrics groups: ${Object.keys(await vm.metrics()).length}`);
    await vm.pause();
    snap = join(work, 'snap');
    p = performance.now();
    const m = await vm.snapshot({ dir: snap });
    console.log(
      `# Full snapshot of 512 MiB: ${(performance.now() - p).toFixed(0)} ms, state ${m.state.bytes} bytes`,
    );
    assert.equal((await vm.wait()).reason, 'snapshot');
  });

  it('restores two copy-on-write clones that run independently', { skip }, async () => {
    await copy(join(work, 'src.raw'), 'c1');
    await copy(join(work, 'src.raw'), 'c2');
    const t = Date.now();
    const clones = await Promise.all([
      restore(snap, 'c1', namespaces[1] as string),
      restore(snap, 'c2', namespaces[2] as string),
    ]);
    const running = Date.now() - t;
    const healthy = await Promise.all(
      namespaces.slice(1, 3).map((ns) => waitForHttp(ns, url('/health'), 204, 10_000)),
    );
    console.log(
      `# 2 concurrent restores: running after ${running} ms, envd healthy after ${Math.max(...healthy) - t} ms`,
    );
    assert.ok(clones.every((c) => c.state === 'running'));
    if (JAILER !== undefined) {
      const uids = await Promise.all(
        clones.map(
          async (c) => /^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${c.pid}/status`, 'utf8'))?.[1],
        ),
      );
      assert.notEqual(uids[0], uids[1], 'each jailed clone runs as its own uid');
      assert.ok(
        uids.every((u) => Number(u) > 4242),
        `jail uids: ${uids.join(', ')}`,
      );
    }
    if (EDITOR !== undefined) {
      const [c1] = clones;
      await c1.pause();
      const p = performance.now();
      const d = await c1.snapshot({ dir: join(work, 'snap-diff'), type: 'Diff' });
      console.log(
        `# Diff snapshot + merge: ${(performance.now() - p).toFixed(0)} ms (parent ${d.vmm.parent})`,
      );
      await copy(join(work, 'c1.raw'), 'c3');
      await restore(join(work, 'snap-diff'), 'c3', namespaces[3] as string);
      await waitForHttp(namespaces[3] as string, url('/health'), 204, 10_000);
    } else {
      console.log('# Diff snapshot skipped: AENV_FIRECRACKER_SNAPSHOT_EDITOR is not set');
    }
    for (const vm of vms) await vm.stop();
    for (const name of ['c1', 'c2']) {
      assert.deepEqual((await readdir(join(work, `run-${name}`))).sort(), [
        'firecracker.log',
        'serial.log',
      ]);
    }
  });
});
