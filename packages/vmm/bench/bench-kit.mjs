/**
 * Shared setup of the vmm benchmarks: guest artifacts with the envd
 * stand-in, namespaces with a tap each, qcow2 overlays, the qemu driver, a
 * command runner inside the guest and host memory figures of a QEMU.
 * Everything lives in one temporary directory that `close()` removes;
 * {@link openBench} registers that in the benchmark's `Cleanup` (the frame,
 * results and tables are the repository's bench kit, `bench/lib/`).
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '@aenv/shared';
import { createVmmDriver, vmmConfigSchema } from '../dist/src/index.js';
import { writeEnvdStandIn } from '../dist/test/fixtures/envd-stand-in.js';
import { guestArtifacts } from '../dist/test/fixtures/guest-artifacts.js';
import { createNetns, deleteNetns, httpInNetns, waitForHttp } from '../dist/test/fixtures/netns.js';

export const run = promisify(execFile);
export const GUEST = '10.209.0.2';
export const MAC = '02:00:00:00:00:02';
export const toMiB = (bytes) => bytes / 2 ** 20;

/** A bench workspace: artifacts, a driver, namespaces, VMs; `close()` removes it all. */
class BenchKit {
  namespaces = [];
  vms = [];

  constructor(name, work, art, driver, choice) {
    Object.assign(this, { name, work, art, driver, choice });
  }

  /** A namespace with tap0; the guest is GUEST in every one. */
  async netns(i) {
    const ns = `aenvb${process.pid}-${this.name.slice(0, 3)}${i}`;
    await deleteNetns(ns);
    await createNetns(ns, '10.209.0.1/30');
    this.namespaces.push(ns);
    return ns;
  }

  async overlay(file, backing, format) {
    const path = join(this.work, file);
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', backing, '-F', format, path]);
    return path;
  }

  drives(rootfs) {
    return [
      { id: 'rootfs', source: { kind: 'file', path: rootfs, format: 'qcow2' }, readOnly: false },
      {
        id: 'tools',
        source: { kind: 'file', path: this.art.toolsImage, format: 'raw' },
        readOnly: true,
      },
    ];
  }

  async boot(id, memoryMiB, rootfs, ns) {
    const vm = await this.driver.boot({
      id,
      vcpus: 1,
      memoryMiB,
      kernel: this.art.kernel,
      initrd: this.art.initrd,
      guest: { address: `${GUEST}/30`, gateway: '10.209.0.1' },
      drives: this.drives(rootfs),
      network: { netns: ns, tap: 'tap0', mac: MAC },
      runDir: join(this.work, `run-${id}`),
    });
    this.vms.push(vm);
    await waitForHttp(ns, `http://${GUEST}:49983/health`, 204, 120_000);
    return vm;
  }

  async restore(id, dir, rootfs, ns) {
    const vm = await this.driver.restore(
      { dir },
      {
        id,
        drives: this.drives(rootfs),
        network: { netns: ns, tap: 'tap0', mac: MAC },
        runDir: join(this.work, `run-${id}`),
      },
    );
    this.vms.push(vm);
    return vm;
  }

  /** Wall-clock time (Date.now()) of the first /health 204 in `ns`. */
  healthy(ns) {
    return waitForHttp(ns, `http://${GUEST}:49983/health`, 204, 60_000);
  }

  async exec(ns, cmd) {
    const a = await httpInNetns(ns, `http://${GUEST}:49983/exec`, {
      method: 'POST',
      body: cmd,
      timeoutMs: 120_000,
    });
    const r = JSON.parse(a.body);
    if (r.code !== 0) throw new Error(`${cmd}: ${r.stderr}`);
    return r.stdout;
  }

  /** Rss and Pss of a process in bytes (smaps_rollup). */
  async memory(pid) {
    const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    return { rss: kb('Rss'), pss: kb('Pss') };
  }

  async close() {
    for (const vm of this.vms) await vm.stop({ graceMs: 0 }).catch(() => undefined);
    for (const ns of this.namespaces) await deleteNetns(ns);
    await rm(this.work, { recursive: true, force: true });
  }
}

/**
 * Opens a bench workspace (config `env` overrides for the driver; the
 * environment's `AENV_VMM_*`/`AENV_QEMU_*` pass through; the guest runs the
 * envd stand-in unless `realEnvd`) and registers its close in `ctx.cleanup`.
 */
export async function openBench(ctx, name, env = {}, realEnvd = false) {
  const work = await mkdtemp(join(tmpdir(), `aenv-bench-${name}-`));
  const standIn = realEnvd ? undefined : await writeEnvdStandIn(join(work, 'envd'));
  const cache =
    process.env.AENV_TEST_CACHE ?? process.env.AENV_ARTIFACTS_DIR ?? '/var/tmp/aenv-test-cache';
  const art = await guestArtifacts(cache, standIn?.dir);
  if (typeof art === 'string') throw new Error(art);
  const passed = Object.entries(process.env).filter(([k]) => /^AENV_(VMM|QEMU)_/.test(k));
  const config = loadConfig(vmmConfigSchema, {
    env: { ...Object.fromEntries(passed), AENV_QEMU_HELPER_DIR: join(work, 'helpers'), ...env },
  });
  const { driver, choice } = await createVmmDriver(config);
  const kit = new BenchKit(name, work, art, driver, choice);
  ctx.cleanup.add(`close vmm bench ${name}`, () => kit.close());
  return kit;
}

/** Writes `mib` MiB of random data into the guest's tmpfs (1 MiB of /dev/urandom, repeated). */
export function dirtyCommand(mibs, file = '/dev/shm/dirty') {
  if (mibs === 0) return 'true';
  return `head -c 1M /dev/urandom > /tmp/r && for i in $(seq ${mibs}); do cat /tmp/r; done > ${file} && rm /tmp/r`;
}
