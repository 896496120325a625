/**
 * Baselines without the node: what the VMM does alone.
 *
 * - {@link bareQemuBoot}: `qemu-system-x86_64 -M microvm` with the guest
 *   kernel and a minimal busybox initramfs that prints READY: the floor of
 *   any cold boot of that kernel on this host (plain QEMU, no aenv code).
 * - {@link BareRestorer}: the vmm driver restoring the node's own template
 *   snapshot (the very directory `POST /sandboxes` restores) with a qcow2
 *   overlay over the template's disk exported to a raw file, in a network
 *   slot of its own, timed until the guest's envd answers `/health` from
 *   the host. Create minus this is the node's overhead: API, storage
 *   engine, slot lease, `/init`, bookkeeping.
 *
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { chmod, copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { prepareGuestArtifacts } from '@aenv/guest';
import { GUEST_MAC, SlotManager, networkConfigSchema } from '@aenv/network';
import { loadConfig } from '@aenv/shared';
import {
  ImageDevice,
  createBlobStore,
  exportRawImage,
  resolveStorageSettings,
} from '@aenv/storage';
import { createVmmDriver, hostCpuKhz } from '@aenv/vmm';
import { ENVD_PORT, artifactsDir } from './bench-node.mjs';

const run = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A busybox initramfs whose init prints READY and powers off; returns its path. */
export async function miniInitramfs(dir) {
  const root = join(dir, 'mini-root');
  await mkdir(join(root, 'bin'), { recursive: true });
  await copyFile('/bin/busybox', join(root, 'bin/busybox'));
  await writeFile(
    join(root, 'init'),
    '#!/bin/busybox sh\n/bin/busybox echo READY\n/bin/busybox poweroff -f\n',
  );
  await chmod(join(root, 'init'), 0o755);
  const out = join(dir, 'mini.cpio');
  await run('sh', ['-c', `cd '${root}' && find . | cpio -o -H newc --quiet > '${out}'`]);
  return out;
}

/**
 * Boots `kernel` + `initrd` in plain QEMU and resolves with the ms from
 * spawn to READY on the serial console.
 * @param {{ kernel: string, initrd: string, accel: 'kvm' | 'tcg', memoryMiB?: number }} o
 */
export async function bareQemuBoot(o) {
  const khz = (await hostCpuKhz()) ?? 2_000_000;
  const append = `console=ttyS0 panic=-1 quiet tsc_early_khz=${khz} tsc=reliable no_timer_check mitigations=off cryptomgr.notests`;
  const args = ['-M', 'microvm', '-accel', o.accel, '-m', String(o.memoryMiB ?? 512)];
  args.push('-nographic', '-no-reboot', '-nodefaults', '-serial', 'stdio');
  args.push('-kernel', o.kernel, '-initrd', o.initrd, '-append', append);
  if (o.accel === 'kvm') args.push('-cpu', 'host');
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let readyAt;
    const timer = setTimeout(() => p.kill('SIGKILL'), 60_000);
    const onData = (d) => {
      out += d;
      if (readyAt === undefined && out.includes('READY')) {
        readyAt = performance.now() - t0;
        p.kill('SIGKILL');
      }
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.on('exit', () => {
      clearTimeout(timer);
      if (readyAt === undefined)
        reject(new Error(`bare boot never printed READY: ${out.slice(-400)}`));
      else resolve(readyAt);
    });
  });
}

/**
 * Polls `url` until it answers 2xx; resolves with `performance.now()` of
 * that answer.
 */
export async function waitHealthy(url, timeoutMs = 60_000, everyMs = 5) {
  const deadline = performance.now() + timeoutMs;
  let last;
  while (performance.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return performance.now();
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(everyMs);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (last: ${last})`);
}

/** Restores of a node's template snapshot by the vmm driver alone. */
export class BareRestorer {
  #n = 0;

  constructor(o) {
    Object.assign(this, o);
  }

  /**
   * Exports the template's disk, starts a driver and a slot manager of its
   * own (prefix and address pool given), all undone by `ctx.cleanup`.
   * @param {{ work: string, cleanup: import('@aenv/shared').Cleanup }} ctx
   * @param {import('./bench-node.mjs').BenchNode} node
   * @param {{ prefix: string, addressPool: string, template?: string }} o
   */
  static async open(ctx, node, o) {
    const { state } = node.node;
    const snapshot = state.snapshots.get(state.templates.resolve(o.template ?? 'base').snapshotId);
    const dir = join(ctx.work, `bare-${o.prefix}`);
    await mkdir(dir, { recursive: true });
    const store = createBlobStore(
      resolveStorageSettings(node.config.storage, node.config.home).store,
    );
    const device = await ImageDevice.open({ image: snapshot.image, store });
    const raw = join(dir, 'template-disk.raw');
    try {
      await exportRawImage(device, raw);
    } finally {
      await device.close();
    }
    const artifacts = await prepareGuestArtifacts({ cacheDir: artifactsDir() });
    const { driver } = await createVmmDriver(node.config.vmm);
    const network = loadConfig(networkConfigSchema, {
      env: {
        AENV_NETWORK_PREFIX: o.prefix,
        AENV_NETWORK_ADDRESS_POOL: o.addressPool,
        AENV_NETWORK_LOCK_DIR: join(dir, 'lock'),
      },
    });
    const slots = await SlotManager.start({ config: network });
    ctx.cleanup.add('close bare slots', () => slots.close());
    return new BareRestorer({ dir, raw, artifacts, driver, slots, snapshotDir: snapshot.dir });
  }

  /**
   * Restores one VM and leaves it running: `{ runningMs, healthyMs, url,
   * stop() }`, timed from the driver call to a running VMM and to envd's
   * first 2xx `/health` (`url` reaches that envd from the host). Its disk
   * is a qcow2 overlay over the exported template disk, or with
   * `format: 'raw'` a sparse copy of it (always for Firecracker, which
   * has no qcow2); disk and slot are prepared before the clock starts.
   */
  async start(format = this.driver.kind === 'firecracker' ? 'raw' : 'qcow2') {
    const id = `bare${this.#n++}`;
    const disk = join(this.dir, `${id}.${format}`);
    if (format === 'raw') await run('cp', ['--sparse=always', this.raw, disk]);
    else await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', this.raw, '-F', 'raw', disk]);
    const slot = await this.slots.acquire();
    const { driveIds, toolsImage } = this.artifacts;
    const rootfs = { kind: 'file', path: disk, format };
    const tools = { kind: 'file', path: toolsImage, format: 'raw' };
    const spec = {
      id,
      drives: [
        { id: driveIds.rootfs, source: rootfs, readOnly: false },
        { id: driveIds.tools, source: tools, readOnly: true },
      ],
      network: { netns: slot.netnsPath, tap: slot.tapName, mac: GUEST_MAC },
      runDir: join(this.dir, `run-${id}`),
    };
    const release = async (vm) => {
      await vm?.stop({ graceMs: 0 });
      await this.slots.release(slot);
      await rm(disk, { force: true });
    };
    let vm;
    try {
      const t0 = performance.now();
      vm = await this.driver.restore({ dir: this.snapshotDir }, spec);
      const runningMs = performance.now() - t0;
      const url = `http://${slot.slotIp}:${ENVD_PORT}`;
      const healthyMs = (await waitHealthy(`${url}/health`)) - t0;
      return { runningMs, healthyMs, url, stop: () => release(vm) };
    } catch (err) {
      await release(vm);
      throw err;
    }
  }

  /** One restore, stopped again: `{ runningMs, healthyMs }`. */
  async restore() {
    const r = await this.start();
    await r.stop();
    return { runningMs: r.runningMs, healthyMs: r.healthyMs };
  }
}
