// The firecracker driver against a STAND-IN for the firecracker binary
// (test/firecracker/stand-in/): the driver spawns it exactly as it would
// spawn Firecracker, and every API request it sends is validated against
// Firecracker's published spec (v1.16) and state rules. No guest code runs;
// the stand-in's tiny "guest" only proves which memory and drives a VM got.
// Covers boot, pause/resume, balloon, metrics, Full and Diff snapshots,
// copy-on-write restores, refusals of incompatible restores, the ways a VM
// ends, and that nothing is left behind. Needs root for the network
// namespaces (skipped with the reason otherwise).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import { access, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { VMM_CHANNELS, readManifest, type DriveSpec, type NetworkSpec } from '../../src/index.js';
import { FirecrackerDriver } from '../../src/firecracker/firecracker-driver.js';
import type { FirecrackerVm } from '../../src/firecracker/firecracker-vm.js';
import { NbdAttacher } from '../../src/firecracker/nbd-attachment.js';
import { sealManifest, writeManifest } from '../../src/snapshot-manifest.js';
import { createNetns, deleteNetns } from '../fixtures/netns.js';
import { installStandIns, readRequests, type StandIns } from './fixtures/stand-ins.js';

const code = (c: string) => (e: Error & { code?: string }) => e.code === c;
const isRoot = process.getuid?.() === 0;
const NS = ['a', 'b', 'c'].map((n) => `aenvfc-${process.pid}-${n}`);
const MAC = '02:fc:00:00:00:02';

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

describe('firecracker driver against the firecracker stand-in', { timeout: 120_000 }, () => {
  let work = '';
  let fc: StandIns;
  let driver: FirecrackerDriver;
  const vms: FirecrackerVm[] = [];
  const events: Record<string, unknown>[] = [];
  const onEvent = (m: unknown): void => void events.push(m as Record<string, unknown>);

  const file = (name: string) => join(work, name);
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
  const net = (i: number): NetworkSpec | undefined =>
    isRoot ? { netns: NS[i] as string, tap: 'tap0', mac: MAC } : undefined;
  const track = <T extends FirecrackerVm>(vm: T): T => (vms.push(vm), vm);

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'aenv-fc-'));
    fc = await installStandIns(work);
    await writeFile(file('vmlinux'), 'stand-in kernel');
    await writeFile(file('initrd'), 'stand-in initrd');
    for (const tag of ['src', 'c1', 'c2', 'c3'])
      await writeFile(file(`rootfs-${tag}.raw`), Buffer.alloc(1 << 20));
    await writeFile(file('tools.raw'), Buffer.alloc(1 << 20));
    if (isRoot) for (const [i, ns] of NS.entries()) await createNetns(ns, `10.202.${i}.1/30`);
    else
      console.log('# network namespaces skipped: not root (the VMs run without a network device)');
    await mkdir(file('empty-sysfs'));
    driver = await FirecrackerDriver.create({
      binary: fc.firecracker,
      snapshotEditor: fc.snapshotEditor,
      trackDirtyPages: true,
      vsockCid: 3,
      logLevel: 'Info',
      balloon: {
        amount_mib: 0,
        deflate_on_oom: true,
        free_page_reporting: true,
        stats_polling_interval_s: 1,
      },
      nbd: new NbdAttacher({ sysfs: file('empty-sysfs'), nbdClient: 'no-such-nbd-client' }),
    });
    for (const ch of Object.values(VMM_CHANNELS)) channel(ch).subscribe(onEvent);
  });

  after(async () => {
    for (const ch of Object.values(VMM_CHANNELS)) channel(ch).unsubscribe(onEvent);
    await Promise.all(vms.map((vm) => vm.stop({ graceMs: 0 })));
    for (const ns of NS) await deleteNetns(ns);
    await rm(work, { recursive: true, force: true });
  });

  const bootSpec = (id: string) => ({
    id,
    vcpus: 2,
    memoryMiB: 64,
    kernel: file('vmlinux'),
    initrd: file('initrd'),
    cmdline: ['aenv.test=1'],
    guest: { hostname: 'sbx', address: '169.254.100.2/30', gateway: '169.254.100.1' },
    drives: drives('src'),
    runDir: file(`run-${id}`),
    ...(net(0) === undefined ? {} : { network: net(0) }),
  });

  let src: FirecrackerVm;
  let bootId = '';

  it('reports its version, mode and capabilities', async () => {
    assert.equal(await driver.version(), 'Firecracker v1.16.1');
    assert.equal(driver.mode, 'kvm');
    assert.ok(
      driver.capabilities.has('cow-restore') && driver.capabilities.has('snapshot-keep-paused'),
    );
    assert.ok(!driver.capabilities.has('nbd-drives'), 'no NBD support on this (fake) host');
    assert.ok(!driver.capabilities.has('prepared-restore'));
    await assert.rejects(driver.prepareRestore(), code('VMM_NOT_SUPPORTED'));
  });

  it('boots: the stand-in saw every device, opened the drives through inherited fds', async () => {
    src = track((await driver.boot(bootSpec('src'))) as FirecrackerVm);
    assert.equal(src.state, 'running');
    assert.ok(src.pid !== undefined);
    const text = await src.waitForConsole(/cmdline .*\r\n/, { timeoutMs: 5000 });
    bootId = /booted boot=(\w+) vcpus=2 mem=64/.exec(text)?.[1] ?? '';
    assert.notEqual(bootId, '');
    for (const arg of [
      'console=ttyS0',
      'reboot=k',
      'aenv.hostname=sbx',
      'aenv.ip=169.254.100.2/30',
      'aenv.test=1',
    ]) {
      assert.match(text, new RegExp(`cmdline .*${arg.replace(/[.]/g, '\\.')}`));
    }
    const reqs = (await readRequests(fc.requestLog)).filter((r) => r.status < 300);
    const ops = reqs.map((r) => r.operationId);
    assert.deepEqual(ops.slice(0, 4), [
      'describeInstance',
      'putLogger',
      'putMetrics',
      'putMachineConfiguration',
    ]);
    assert.equal(ops.at(-1), 'createSyncAction');
    const driveBodies = reqs
      .filter((r) => r.operationId === 'putGuestDriveByID')
      .map((r) => r.body);
    assert.deepEqual(
      driveBodies.map((b) => (b as { path_on_host: string }).path_on_host),
      ['/proc/self/fd/3', '/proc/self/fd/4'],
    );
    for (const op of ['putBalloon', 'putEntropyDevice', 'putGuestVsock', 'putGuestBootSource'])
      assert.ok(ops.includes(op), op);
    assert.equal(ops.includes('putGuestNetworkInterfaceByID'), isRoot);
    assert.ok(src.vsockPath !== null && (await exists(src.vsockPath)), 'vsock socket is up');
  });

  it('pauses, resumes, drives the balloon, flushes metrics and keeps the VMM log', async () => {
    await src.pause();
    assert.equal(src.state, 'paused');
    await assert.rejects(src.pause(), code('VMM_INVALID_STATE'));
    await src.resume();
    await src.setBalloon(16);
    assert.equal((await src.balloonStats()).target_mib, 16);
    const metrics = await src.metrics();
    assert.equal((metrics.put_api_requests as Record<string, number>).putBalloon_count, 1);
    assert.match(src.vmmLogTail(), /Running Firecracker v1\.16\.1/);
    assert.ok(
      events.some(
        (e) => e.op === 'pause' && e['vmm.driver'] === 'firecracker' && e['sandbox.id'] === 'src',
      ),
    );
  });

  let full = '';
  let fullMemHash = '';

  it('takes a Full snapshot and stays paused', async () => {
    await src.pause();
    full = file('snap-full');
    const m = await src.snapshot({ dir: full, after: 'pause' });
    assert.equal(src.state, 'paused');
    assert.deepEqual(
      [m.driver, m.mode, m.vmmVersion, m.vmm.snapshotType, m.vmm.drivePaths],
      ['firecracker', 'kvm', 'Firecracker v1.16.1', 'Full', 'fd'],
    );
    assert.deepEqual(m.drives, [
      { id: 'rootfs', readOnly: false },
      { id: 'tools', readOnly: true },
    ]);
    assert.equal(m.memory.bytes, 64 * 1024 * 1024);
    assert.deepEqual((await readdir(full)).sort(), ['manifest.json', 'memory', 'vmstate']);
    assert.deepEqual(await readManifest(full), m);
    fullMemHash = await sha256(join(full, 'memory'));
    await assert.rejects(src.snapshot({ dir: full, after: 'pause' }), code('INVALID_ARGUMENT'));
    await src.resume();
  });

  it('restores two copy-on-write clones that find their memory and new drives', async () => {
    const clone = async (id: string, i: number, tag: string) =>
      track(
        (await driver.restore(
          { dir: full },
          {
            id,
            drives: drives(tag),
            runDir: file(`run-${id}`),
            ...(net(i) === undefined ? {} : { network: net(i) }),
          },
        )) as FirecrackerVm,
      );
    const [c1, c2] = await Promise.all([clone('c1', 1, 'c1'), clone('c2', 2, 'c2')]);
    for (const c of [c1, c2]) {
      assert.equal(c.state, 'running');
      await c.waitForConsole(
        new RegExp(`restored boot=${bootId} resumes=1 marker=boot-marker:${bootId}`),
        { timeoutMs: 5000 },
      );
    }
    await c2.stop();
    assert.equal(
      await sha256(join(full, 'memory')),
      fullMemHash,
      'the snapshot memory is never written',
    );
    const loads = (await readRequests(fc.requestLog)).filter(
      (r) => r.operationId === 'loadSnapshot',
    );
    const bodies = loads.map((r) => r.body as Record<string, unknown>);
    for (const b of bodies) {
      assert.deepEqual(b.mem_backend, { backend_type: 'File', backend_path: join(full, 'memory') });
      assert.equal(b.resume_vm, true);
    }
    const overrides = bodies.map((b) => (b.vsock_override as { uds_path: string }).uds_path).sort();
    assert.deepEqual(overrides, [
      join(file('run-c1'), 'vsock.sock'),
      join(file('run-c2'), 'vsock.sock'),
    ]);
    if (isRoot)
      assert.deepEqual(bodies[0]?.network_overrides, [{ iface_id: 'eth0', host_dev_name: 'tap0' }]);

    // a Diff snapshot of clone 1 is merged onto the Full one: its pages win, the base's stay
    await c1.pause();
    const diff = file('snap-diff');
    const m = await c1.snapshot({ dir: diff, type: 'Diff' });
    assert.equal(c1.state, 'stopped');
    assert.equal((await c1.wait()).reason, 'snapshot');
    assert.deepEqual([m.vmm.snapshotType, m.vmm.parent], ['Diff', full]);
    assert.deepEqual((await readdir(diff)).sort(), ['manifest.json', 'memory', 'vmstate']);
    const c3 = track(
      (await driver.restore(
        { dir: diff },
        {
          id: 'c3',
          drives: drives('c3'),
          runDir: file('run-c3'),
          ...(net(1) === undefined ? {} : { network: net(1) }),
        },
      )) as FirecrackerVm,
    );
    await c3.waitForConsole(
      new RegExp(`restored boot=${bootId} resumes=2 marker=boot-marker:${bootId}`),
      { timeoutMs: 5000 },
    );
    await c3.stop();
  });

  it('refuses restores that cannot work, before starting anything', async () => {
    const spec = {
      id: 'x',
      drives: drives('c1'),
      runDir: file('run-x'),
      ...(net(1) === undefined ? {} : { network: net(1) }),
    };
    await assert.rejects(
      driver.restore({ dir: full }, { ...spec, drives: drives('c1').slice(0, 1) }),
      code('VMM_SNAPSHOT_INCOMPATIBLE'),
    );
    if (isRoot)
      await assert.rejects(
        driver.restore(
          { dir: full },
          { ...spec, network: { netns: NS[1] as string, tap: 'tap0', mac: '02:00:00:00:00:99' } },
        ),
        code('VMM_SNAPSHOT_INCOMPATIBLE'),
      );
    const older = new FirecrackerDriver({
      binary: fc.firecracker,
      vmmVersion: 'Firecracker v1.15.0',
    });
    await assert.rejects(older.restore({ dir: full }, spec), /taken with Firecracker v1\.16\.1/);
    const jailed = new FirecrackerDriver({
      binary: fc.firecracker,
      vmmVersion: 'Firecracker v1.16.1',
      jailer: { binary: fc.jailer, uid: 4242, gid: 4242 },
    });
    await assert.rejects(jailed.restore({ dir: full }, spec), /without the jailer/);
    const forged = file('snap-qemu');
    await mkdir(forged);
    const { checksum: _c, ...body } = await readManifest(full);
    await writeManifest(forged, sealManifest({ ...body, driver: 'qemu', mode: 'tcg' }));
    await assert.rejects(driver.restore({ dir: forged }, spec), /taken by the qemu driver/);
    await assert.rejects(
      driver.restore({ dir: file('nowhere') }, spec),
      code('VMM_SNAPSHOT_INVALID'),
    );
    assert.equal(await exists(file('run-x/firecracker.sock')), false);
  });

  it('refuses Diff snapshots without dirty-page tracking, qcow2 and (here) NBD drives', async () => {
    const plain = new FirecrackerDriver({
      binary: fc.firecracker,
      vmmVersion: 'Firecracker v1.16.1',
    });
    const vm = track(
      (await plain.boot({ ...bootSpec('plain'), drives: drives('c2') })) as FirecrackerVm,
    );
    await vm.pause();
    await assert.rejects(
      vm.snapshot({ dir: file('snap-nodiff'), type: 'Diff' }),
      code('VMM_NOT_SUPPORTED'),
    );
    assert.equal(await exists(file('snap-nodiff')), false);
    await vm.stop();
    const qcow: DriveSpec = {
      id: 'rootfs',
      source: { kind: 'file', path: file('x.qcow2'), format: 'qcow2' },
      readOnly: false,
    };
    await assert.rejects(
      driver.boot({ ...bootSpec('q'), drives: [qcow] }),
      /does not support qcow2 drives/,
    );
    const nbd: DriveSpec = {
      id: 'rootfs',
      source: { kind: 'nbd', socket: file('nbd.sock'), export: 'e' },
      readOnly: false,
    };
    await assert.rejects(
      driver.boot({ ...bootSpec('n'), drives: [nbd] }),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_NOT_SUPPORTED' &&
        /nbd kernel module/.test(e.message) &&
        /apt-get install nbd-client/.test(e.message),
    );
  });

  it('fails a boot cleanly, with Firecracker fault message, leaving nothing behind', async () => {
    const spec = { ...bootSpec('bad'), kernel: file('no-kernel') };
    await assert.rejects(
      driver.boot(spec),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_START_FAILED' && /kernel file cannot be opened/.test(e.message),
    );
    assert.deepEqual(
      (await readdir(spec.runDir)).filter((f) => f !== 'serial.log' && f !== 'firecracker.log'),
      [],
    );
  });

  it('tells a crash, a guest power-off and a stop apart, and cleans up after each', async () => {
    const spec = (id: string) => ({ ...bootSpec(id), drives: drives('c3'), network: undefined });
    const crash = track((await driver.boot(spec('crash'))) as FirecrackerVm);
    process.kill(crash.pid as number, 'SIGKILL');
    assert.equal((await crash.wait()).reason, 'crash');
    const guest = track((await driver.boot(spec('guest'))) as FirecrackerVm);
    process.kill(guest.pid as number, 'SIGUSR2');
    const g = await guest.wait();
    assert.deepEqual([g.reason, g.code], ['guest', 0]);
    await assert.rejects(guest.waitForConsole(/never/), code('VMM_PROCESS_EXITED'));
    const info = await src.stop();
    assert.equal(info.reason, 'stop');
    assert.equal(src.state, 'stopped');
    assert.equal(src.pid, undefined);
    for (const id of ['crash', 'guest', 'src']) {
      const left = (await readdir(file(`run-${id}`))).sort();
      assert.deepEqual(left, ['firecracker.log', 'serial.log'], `run-${id}`);
    }
    assert.match(await readFile(join(file('run-src'), 'serial.log'), 'utf8'), /booted boot=/);
  });

  it('sent only requests that the spec and the state rules accept', async () => {
    const reqs = await readRequests(fc.requestLog);
    assert.deepEqual(
      reqs.filter((r) => r.specErrors !== undefined),
      [],
      'no request broke the spec',
    );
    const refused = reqs.filter((r) => r.status >= 300);
    assert.deepEqual(
      refused.map((r) => r.operationId),
      ['putGuestBootSource'],
      'only the deliberate bad kernel',
    );
    const used = new Set(reqs.map((r) => r.operationId));
    for (const op of [
      'putLogger',
      'putMetrics',
      'putMachineConfiguration',
      'putGuestBootSource',
      'putGuestDriveByID',
      'putBalloon',
      'putEntropyDevice',
      'putGuestVsock',
      'createSyncAction',
      'patchVm',
      'createSnapshot',
      'loadSnapshot',
      'patchBalloon',
      'describeBalloonStats',
    ]) {
      assert.ok(used.has(op), `${op} was exercised`);
    }
  });
});
