// The qemu driver with real guests under TCG: boot → envd (stand-in) →
// pause → resume → snapshot → two copy-on-write clones, alive and
// independent → refusals of incompatible restores → a snapshot of a
// restored clone (the template's base file, hard-linked, plus a RAM diff)
// restored again, also after the template's directory is gone → crash,
// guest power-off and stop each noticed → nothing left behind (no QEMU
// process, socket, memory file or namespace). QEMU's privileges and the
// guest's identity after a restore have suites of their own.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '@aenv/shared';
import {
  QemuDriver,
  VMM_CHANNELS,
  createVmmDriver,
  readManifest,
  vmmConfigSchema,
  type DriveSpec,
  type Vm,
  type VmmDriver,
} from '../src/index.js';
import { writeEnvdStandIn, STAND_IN_READY } from './fixtures/envd-stand-in.js';
import { guestArtifacts, type TestGuestArtifacts } from './fixtures/guest-artifacts.js';
import { createNetns, deleteNetns, httpInNetns, waitForHttp } from './fixtures/netns.js';

const run = promisify(execFile);
const PREFIX = `t${process.pid}`;
const GUEST = '10.201.0.2';
const MAC = '02:00:00:00:00:02';
const url = (path: string): string => `http://${GUEST}:49983${path}`;
const ms = (t: number): string => `${Math.round(performance.now() - t)} ms`;
const code = (c: string) => (e: Error & { code?: string }) => e.code === c;

async function exec(ns: string, cmd: string): Promise<string> {
  const a = await httpInNetns(ns, url('/exec'), { method: 'POST', body: cmd, timeoutMs: 15_000 });
  assert.equal(a.status, 200, `exec in ${ns}: ${a.status} ${a.body}`);
  return (JSON.parse(a.body) as { stdout: string }).stdout;
}

async function qemuLeft(): Promise<string> {
  const { stdout } = await run('pgrep', ['-af', `aenv-${PREFIX}`]).catch(() => ({ stdout: '' }));
  return stdout.trim();
}

describe('qemu driver under TCG', { timeout: 600_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'aenv-vmm-vm-'));
  const cacheDir = process.env.AENV_TEST_CACHE ?? join(work, 'cache');
  const standIn = await writeEnvdStandIn(join(work, 'envd-stand-in'));
  const guest = await guestArtifacts(cacheDir, standIn.dir);
  const skip = typeof guest === 'string' ? guest : false;
  const art = guest as TestGuestArtifacts;
  const namespaces = ['src', 'c1', 'c2'].map((n) => `aenvv-${PREFIX}-${n}`);
  const [NS0, NS1, NS2] = namespaces as [string, string, string];
  const vms: Vm[] = [];
  const events: Record<string, unknown>[] = [];
  const onEvent = (m: unknown): void => void events.push(m as Record<string, unknown>);
  let driver: VmmDriver;

  const tools: () => DriveSpec = () => ({
    id: 'tools',
    source: { kind: 'file', path: art.toolsImage, format: 'raw' },
    readOnly: true,
  });
  const rootfs = (name: string): DriveSpec => ({
    id: 'rootfs',
    source: { kind: 'file', path: join(work, `${name}.qcow2`), format: 'qcow2' },
    readOnly: false,
  });
  const overlay = async (name: string, backing: string, format: string): Promise<void> => {
    await run('qemu-img', [
      'create',
      '-q',
      '-f',
      'qcow2',
      '-b',
      backing,
      '-F',
      format,
      join(work, `${name}.qcow2`),
    ]);
  };

  before(async () => {
    if (skip !== false) return;
    for (const ns of namespaces) await createNetns(ns, '10.201.0.1/30');
    channel(VMM_CHANNELS.restore).subscribe(onEvent);
    channel(VMM_CHANNELS.exit).subscribe(onEvent);
    const env = { AENV_QEMU_HELPER_DIR: join(work, 'helpers') };
    driver = (await createVmmDriver(loadConfig(vmmConfigSchema, { env }))).driver;
  });

  after(async () => {
    channel(VMM_CHANNELS.restore).unsubscribe(onEvent);
    channel(VMM_CHANNELS.exit).unsubscribe(onEvent);
    for (const vm of vms) await vm.stop({ graceMs: 0 }).catch(() => undefined);
    for (const ns of namespaces) await deleteNetns(ns);
    await rm(work, { recursive: true, force: true });
  });

  let source: Vm;
  let clones: Vm[] = [];

  it('boots to envd and pauses/resumes', { skip }, async () => {
    assert.equal(driver.kind, 'qemu');
    assert.equal(driver.mode, 'tcg');
    await overlay('src', art.baseImage, 'raw');
    const t = Date.now();
    source = await driver.boot({
      id: `${PREFIX}-src`,
      vcpus: 1,
      memoryMiB: 512,
      kernel: art.kernel,
      initrd: art.initrd,
      guest: {
        hostname: 'src',
        address: `${GUEST}/30`,
        gateway: '10.201.0.1',
        dns: ['10.201.0.1'],
      },
      drives: [rootfs('src'), tools()],
      network: { netns: NS0, tap: 'tap0', mac: MAC },
      runDir: join(work, 'run-src'),
    });
    vms.push(source);
    assert.equal(source.state, 'running');
    await source.waitForConsole(new RegExp(STAND_IN_READY), { timeoutMs: 60_000 });
    const at = await waitForHttp(NS0, url('/health'), 204, 10_000);
    console.log(`# cold boot to envd (stand-in) healthy: ${at - t} ms`);
    let p = performance.now();
    await source.pause();
    const pauseMs = performance.now() - p;
    assert.equal(source.state, 'paused');
    assert.equal(
      (await httpInNetns(NS0, url('/health'), { timeoutMs: 300 })).status,
      0,
      'a paused guest does not answer',
    );
    await assert.rejects(source.pause(), code('VMM_INVALID_STATE'));
    p = performance.now();
    await source.resume();
    console.log(
      `# pause ${pauseMs.toFixed(2)} ms, resume ${(performance.now() - p).toFixed(2)} ms`,
    );
    assert.equal((await httpInNetns(NS0, url('/health'))).status, 204);
  });

  it('snapshots: device state plus the memory file; the VM ends into it', { skip }, async () => {
    await exec(NS0, 'echo base > /root/base; sync');
    await source.pause();
    const t = performance.now();
    const m = await source.snapshot({ dir: join(work, 'snap') });
    console.log(
      `# snapshot (stop + x-ignore-shared + memory file): ${ms(t)}, state ${m.state.bytes} bytes`,
    );
    assert.equal(m.driver, 'qemu');
    assert.equal(m.mode, 'tcg');
    assert.equal(m.memory.file, 'memory');
    assert.equal(m.memory.diff, undefined);
    assert.equal(m.parent, null);
    assert.match(m.boot.kernelDigest ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.equal(m.vmm.balloon, true);
    assert.equal((await stat(join(work, 'snap', 'memory'))).mode & 0o777, 0o440);
    assert.ok(m.state.bytes < 1 << 20, `state is ${m.state.bytes} bytes`);
    assert.deepEqual(await source.wait(), { reason: 'snapshot', code: 0, signal: null });
    assert.equal(source.state, 'stopped');
    assert.deepEqual((await readdir(join(work, 'snap'))).sort(), [
      'manifest.json',
      'memory',
      'vmstate',
    ]);
    assert.deepEqual(await readdir(join(work, 'run-src')), ['serial.log']);
  });

  it('restores two copy-on-write clones that run independently', { skip }, async () => {
    const t = Date.now();
    clones = await Promise.all(
      [NS1, NS2].map(async (ns, i) => {
        await overlay(`c${i + 1}`, join(work, 'src.qcow2'), 'qcow2');
        return driver.restore(
          { dir: join(work, 'snap') },
          {
            id: `${PREFIX}-c${i + 1}`,
            drives: [rootfs(`c${i + 1}`), tools()],
            network: { netns: ns, tap: 'tap0', mac: MAC },
            runDir: join(work, `run-c${i + 1}`),
          },
        );
      }),
    );
    vms.push(...clones);
    const running = Date.now() - t;
    const healthy = await Promise.all(
      [NS1, NS2].map((ns) => waitForHttp(ns, url('/health'), 204, 10_000)),
    );
    console.log(
      `# 2 concurrent restores: running after ${running} ms, both envd healthy after ${Math.max(...healthy) - t} ms`,
    );
    assert.ok(clones.every((c) => c.state === 'running'));
    await exec(NS1, 'echo one > /root/clone; echo one > /tmp/clone');
    await exec(NS2, 'echo two > /root/clone; echo two > /tmp/clone');
    assert.equal(await exec(NS1, 'cat /root/base /root/clone /tmp/clone'), 'base\none\none\n');
    assert.equal(await exec(NS2, 'cat /root/base /root/clone /tmp/clone'), 'base\ntwo\ntwo\n');
    const [pss1, pss2] = await Promise.all(
      clones.map((c) => run('grep', ['^Pss:', `/proc/${c.pid}/smaps_rollup`])),
    );
    console.log(`# clone memory: ${pss1?.stdout.trim()} / ${pss2?.stdout.trim()}`);
    assert.ok(
      events.filter((e) => e['sandbox.id'] === `${PREFIX}-c1`).length >= 1,
      'restore event published',
    );
  });

  it('refuses restores it cannot honour, before starting anything', { skip }, async () => {
    const spec = { id: `${PREFIX}-bad`, drives: [tools()], runDir: join(work, 'run-bad') };
    await assert.rejects(
      driver.restore({ dir: join(work, 'snap') }, spec),
      code('VMM_SNAPSHOT_INCOMPATIBLE'),
    );
    const kvm = new QemuDriver({ mode: 'kvm', vmmVersion: await (driver as QemuDriver).version() });
    const full = {
      ...spec,
      drives: [rootfs('c1'), tools()],
      network: { netns: NS1, tap: 'tap0', mac: MAC },
    };
    await assert.rejects(
      kvm.restore({ dir: join(work, 'snap') }, full),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_SNAPSHOT_INCOMPATIBLE' && /taken under tcg/.test(e.message),
    );
    await assert.rejects(
      driver.restore({ dir: join(work, 'no-snap') }, full),
      code('VMM_SNAPSHOT_INVALID'),
    );
    await writeFile(join(work, 'other-vmlinux'), 'another kernel');
    const otherKernel = new QemuDriver({
      mode: 'tcg',
      vmmVersion: await (driver as QemuDriver).version(),
      guestKernel: { kernel: join(work, 'other-vmlinux') },
    });
    await assert.rejects(
      otherKernel.restore({ dir: join(work, 'snap') }, full),
      (e: Error & { code?: string }) =>
        e.code === 'VMM_SNAPSHOT_INCOMPATIBLE' && /configured with .*other-vmlinux/.test(e.message),
    );
  });

  it(
    'snapshots a restored clone as base + RAM diff, keeps it paused, and restores that',
    { skip },
    async () => {
      const clone = clones[0] as Vm;
      await exec(NS1, 'head -c 8M /dev/urandom > /dev/shm/eight');
      const eight = await exec(NS1, 'sha256sum /dev/shm/eight');
      await clone.pause();
      const t = performance.now();
      const m = await clone.snapshot({ dir: join(work, 'snap-diff'), after: 'pause' });
      const template = await readManifest(join(work, 'snap'));
      console.log(
        `# snapshot of a restored VM: ${ms(t)}, state ${m.state.bytes} bytes, RAM diff ${m.memory.diff?.pages} pages`,
      );
      assert.equal(m.memory.file, 'memory');
      assert.equal(m.memory.baseId, template.memory.baseId);
      assert.equal(m.parent, join(work, 'snap'));
      assert.ok((m.memory.diff?.pages ?? 0) >= 2048, 'the 8 MiB written are in the diff');
      const [a, b] = await Promise.all(
        ['snap', 'snap-diff'].map((d) => stat(join(work, d, 'memory'))),
      );
      assert.equal(a?.ino, b?.ino, 'the base file is hard-linked, not copied');
      assert.equal(clone.state, 'paused');
      await clone.resume();
      assert.equal(await exec(NS1, 'cat /tmp/clone'), 'one\n');
      await clone.pause();
      await overlay('c3', join(work, 'c1.qcow2'), 'qcow2');
      const c3 = await driver
        .restore(
          { dir: join(work, 'snap-diff') },
          {
            id: `${PREFIX}-c3`,
            drives: [rootfs('c3'), tools()],
            network: { netns: NS2, tap: 'tap1', mac: MAC },
            runDir: join(work, 'run-c3'),
          },
        )
        .catch((err: unknown) => err as Error);
      // NS2 has no tap1: QEMU fails to start, and leaves no socket, pid or memory link
      assert.ok(
        c3 instanceof Error &&
          /VMM_(START|RESTORE)_FAILED/.test(String((c3 as Error & { code?: string }).code)),
        c3 instanceof Error ? c3.message : 'the restore succeeded',
      );
      assert.deepEqual(
        (await readdir(join(work, 'run-c3'))).filter((f) => f !== 'serial.log'),
        [],
      );
      await clone.stop();
      await overlay('c4', join(work, 'c1.qcow2'), 'qcow2');
      const t4 = Date.now();
      const c4 = await driver.restore(
        { dir: join(work, 'snap-diff') },
        {
          id: `${PREFIX}-c4`,
          drives: [rootfs('c4'), tools()],
          network: { netns: NS1, tap: 'tap0', mac: MAC },
          runDir: join(work, 'run-c4'),
        },
      );
      vms.push(c4);
      console.log(
        `# restore of base + RAM diff to envd healthy: ${(await waitForHttp(NS1, url('/health'), 204, 10_000)) - t4} ms`,
      );
      assert.equal(await exec(NS1, 'cat /tmp/clone /root/clone'), 'one\none\n');
      assert.equal(await exec(NS1, 'sha256sum /dev/shm/eight'), eight);
      await c4.pause();
      const again = await c4.snapshot({ dir: join(work, 'snap-again'), after: 'pause' });
      assert.equal(again.memory.baseId, template.memory.baseId);
      assert.equal(again.parent, join(work, 'snap-diff'));
      // the disk as of the snapshot, for a fork restored from it below (QEMU flushed it at pause)
      await run('cp', ['--sparse=always', join(work, 'c4.qcow2'), join(work, 'c5.qcow2')]);
      await c4.resume();
      assert.equal(await exec(NS1, 'echo later > /tmp/later; cat /tmp/clone'), 'one\n');
      // no snapshot depends on another directory: drop the template and the first diff
      await rm(join(work, 'snap'), { recursive: true });
      await rm(join(work, 'snap-diff'), { recursive: true });
    },
  );

  it(
    'tells a crash, a guest power-off and a stop apart, and leaves nothing behind',
    { skip },
    async () => {
      const [c1, c2] = clones as [Vm, Vm];
      const c4 = vms.find((v) => v.id === `${PREFIX}-c4`) as Vm;
      assert.equal(c1.state, 'stopped');
      assert.equal((await c1.wait()).reason, 'stop');
      await httpInNetns(NS2, url('/exec'), {
        method: 'POST',
        body: 'kill -TERM 1',
        timeoutMs: 1000,
      });
      assert.equal((await c2.wait()).reason, 'guest');
      const doomed = await driver.restore(
        { dir: join(work, 'snap-again') },
        {
          id: `${PREFIX}-c5`,
          drives: [rootfs('c5'), tools()],
          network: { netns: NS2, tap: 'tap0', mac: MAC },
          runDir: join(work, 'run-c5'),
        },
      );
      vms.push(doomed);
      // a fork of c4 as of its snapshot, while c4 itself ran on
      assert.equal(
        await exec(NS2, 'cat /tmp/clone; ls /tmp/later 2>&1 || true'),
        "one\nls: cannot access '/tmp/later': No such file or directory\n",
      );
      assert.equal(await exec(NS1, 'cat /tmp/later'), 'later\n');
      process.kill(doomed.pid as number, 'SIGKILL');
      const exit = await doomed.wait();
      assert.equal(exit.reason, 'crash');
      assert.equal(exit.signal, 'SIGKILL');
      await assert.rejects(doomed.resume(), code('VMM_INVALID_STATE'));
      assert.ok(events.some((e) => e.reason === 'crash' && e['sandbox.id'] === `${PREFIX}-c5`));
      assert.equal((await c4.stop()).reason, 'stop');
      for (const vm of vms) await vm.stop();
      assert.equal(await qemuLeft(), '');
      for (const dir of (await readdir(work)).filter((d) => d.startsWith('run-'))) {
        assert.deepEqual(await readdir(join(work, dir)), ['serial.log'], dir);
      }
    },
  );
});
