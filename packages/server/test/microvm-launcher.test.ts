// The microVM launcher's failure paths with real parts: a real slot manager
// (operating inside a network namespace this test creates), the real storage
// engine and the real qemu driver. A launch aborted right after its disk was
// served, and a launch whose VMM cannot boot (a kernel that does not exist),
// both leave nothing: no export, no socket, no upper, no sandbox directory,
// no leased slot. (Successful launches are covered by the VM suites.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { GUEST_DRIVE_IDS, type GuestArtifacts } from '@aenv/guest';
import { DEFAULT_EGRESS_POLICY, SlotManager, networkConfigSchema } from '@aenv/network';
import { AenvError, loadConfig, newId } from '@aenv/shared';
import { resolveStorageSettings, storageConfigSchema, type ImageSpec } from '@aenv/storage';
import { createVmmDriver, vmmConfigSchema, type VmmDriver } from '@aenv/vmm';
import type { LaunchSpec } from '../src/orchestrator/launcher.js';
import { MicroVmLauncher } from '../src/orchestrator/microvm-launcher.js';
import { NodeStorage } from '../src/storage/node-storage.js';

const exec = promisify(execFile);

async function skipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, nftables)';
  for (const tool of [
    ['ip', '-V'],
    ['nft', '--version'],
    ['qemu-system-x86_64', '--version'],
  ]) {
    try {
      await exec(tool[0] as string, tool.slice(1));
    } catch {
      return `needs ${tool[0]} (scripts/apt-packages.txt)`;
    }
  }
  return undefined;
}

const skip = await skipReason();

describe('MicroVmLauncher failure paths', { skip, timeout: 120_000 }, () => {
  let work: string;
  const netns = `aenvlt${Math.floor(Math.random() * 1e6)}`;
  let slots: SlotManager;
  let storage: NodeStorage;
  let driver: VmmDriver;
  let artifacts: GuestArtifacts;
  let baseImage: ImageSpec | undefined;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'aenv-launcher-'));
    await exec('ip', ['netns', 'add', netns]);
    const prefix = `l${Math.floor(Math.random() * 1e6)}`;
    const network = loadConfig(networkConfigSchema, {
      env: {
        AENV_NETWORK_PREFIX: prefix,
        AENV_NETWORK_ADDRESS_POOL: '10.254.0.0/28',
        AENV_NETWORK_POOL_LOW: '0',
        AENV_NETWORK_POOL_HIGH: '0',
        AENV_NETWORK_LOCK_DIR: join(work, 'lock'),
        AENV_NETWORK_DNS_SERVER: 'none',
      },
    });
    slots = await SlotManager.start({ config: network, netns });
    const home = join(work, 'home');
    const section = loadConfig(storageConfigSchema, { env: { AENV_STORAGE_CACHE_MIB: '16' } });
    storage = await NodeStorage.start({ home, settings: resolveStorageSettings(section, home) });
    await writeFile(join(work, 'base.raw'), Buffer.alloc(1 << 20, 7));
    baseImage = (await storage.importBaseImage(join(work, 'base.raw'))).image;
    ({ driver } = await createVmmDriver(
      loadConfig(vmmConfigSchema, { env: { AENV_VMM_DRIVER: 'qemu', AENV_VMM_ACCEL: 'tcg' } }),
    ));
    const missing = join(work, 'missing');
    artifacts = {
      kernel: join(missing, 'vmlinux'),
      initrd: join(missing, 'initrd'),
      toolsImage: join(work, 'base.raw'),
      baseImage: undefined,
      kernelRelease: 'none',
      kernelPackage: { name: 'none', version: '0' },
      envdVersion: '0.0.0',
      nodeVersion: '0',
      digests: { kernel: '', initrd: '', toolsImage: '', baseImage: undefined },
      driveIds: GUEST_DRIVE_IDS,
      envdPort: 49983,
    };
  });

  after(async () => {
    await slots?.close();
    await storage?.close();
    await exec('ip', ['netns', 'del', netns]).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  });

  async function assertNothingLeft(sandboxId: string): Promise<void> {
    const home = join(work, 'home');
    assert.deepEqual(await readdir(join(work, 'sandboxes')).catch(() => []), []);
    assert.deepEqual(await readdir(join(home, 'nbd')), [], 'no NBD socket');
    assert.equal((await storage.stats()).exports[sandboxId], undefined, 'no export');
    assert.equal(storage.disk(sandboxId), undefined);
    assert.equal(slots.stats().inUse, 0, 'the slot was released');
  }

  const spec = (sandboxId: string): LaunchSpec => ({
    sandboxId,
    vcpus: 1,
    memoryMiB: 128,
    egress: DEFAULT_EGRESS_POLICY,
    source: { kind: 'boot', image: baseImage as ImageSpec },
  });

  it('undoes slot, disk and directory when aborted after the disk was served', async () => {
    const abort = new AbortController();
    const launcher = new MicroVmLauncher({
      driver,
      slots,
      artifacts,
      sandboxesDir: join(work, 'sandboxes'),
      disks: {
        openImage: async (request) => {
          const disk = await storage.openImage(request);
          abort.abort(new AenvError('SBX_KILLED', 'killed during create'));
          return disk;
        },
      },
    });
    const id = newId();
    await assert.rejects(
      launcher.launch(spec(id), abort.signal),
      (err: unknown) => err instanceof AenvError && err.code === 'SBX_KILLED',
    );
    await assertNothingLeft(id);
  });

  it('undoes everything when the VMM cannot boot', async () => {
    const launcher = new MicroVmLauncher({
      driver,
      slots,
      artifacts,
      sandboxesDir: join(work, 'sandboxes'),
      disks: storage,
    });
    const id = newId();
    await assert.rejects(launcher.launch(spec(id), new AbortController().signal));
    await assertNothingLeft(id);
  });
});
