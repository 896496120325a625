/**
 * The jail of one QEMU process (see docs/vmm.md, "The VMM jail"): its own
 * uid/gid from the pool, its cgroup with memory/CPU/pids limits, and a
 * private mount namespace where the hidden directories (the daemon's home,
 * /tmp, /root, ...) are empty except for this VM's own files.
 *
 * Contract: {@link QemuJail.open} takes the uid and creates the cgroup, or
 * leaves nothing; {@link QemuJail.command} (after {@link QemuJail.admit})
 * wraps a QEMU command line in the jail helper; {@link QemuJail.release}
 * (idempotent) removes the cgroup and frees the uid, and must only run once
 * QEMU has exited.
 *
 * @module
 */
import { chown, stat } from 'node:fs/promises';
import { AenvError, Cleanup } from '@aenv/shared';
import { jailCommand, type JailBind } from '../jail/jail-command.js';
import type { JailIdentity, JailUidPool } from '../jail/jail-uid-pool.js';
import { qcow2BackingChain } from '../jail/qcow2-backing.js';
import {
  createVmCgroup,
  removeVmCgroup,
  vmCgroupPlan,
  type CgroupHost,
  type CgroupPlan,
} from '../jail/vm-cgroup.js';
import type { QemuLaunch } from './qemu-args.js';

/** The descriptor a jailed QEMU finds its tap on (`-netdev tap,fd=3`). */
export const JAIL_TAP_FD = 3;

/** How the driver jails every QEMU. */
export interface QemuJailConfig {
  readonly pool: JailUidPool;
  /** The built jail helper (`native/aenv-vmm-jail.c`). */
  readonly helper: () => Promise<string>;
  /** Directories covered by an empty tmpfs in the VMM's mount namespace. */
  readonly hide: readonly string[];
  /** The cgroup controllers; undefined: no cgroup limits (the driver said why). */
  readonly cgroups: CgroupHost | undefined;
  /** Memory allowed beyond guest RAM (QEMU itself, TCG code cache). */
  readonly memoryOverheadMiB: number;
  /** Limit CPU time to the VM's vcpus. */
  readonly cpuLimit: boolean;
  readonly pidsMax: number;
}

/** See the module comment. */
export class QemuJail {
  readonly identity: JailIdentity;
  readonly cgroup: CgroupPlan | undefined;
  readonly #config: QemuJailConfig;
  readonly #cleanup: Cleanup;
  readonly #helper: string;
  #binds: JailBind[] = [];

  private constructor(
    config: QemuJailConfig,
    identity: JailIdentity,
    helper: string,
    cgroup: CgroupPlan | undefined,
    cleanup: Cleanup,
  ) {
    this.#config = config;
    this.identity = identity;
    this.#helper = helper;
    this.cgroup = cgroup;
    this.#cleanup = cleanup;
  }

  /**
   * Takes a uid and creates the cgroup of VM `id`.
   * @throws {AenvError} `VMM_JAIL_EXHAUSTED`, `VMM_JAIL_FAILED`.
   */
  static async open(
    config: QemuJailConfig,
    id: string,
    machine: { vcpus: number; memoryMiB: number },
  ): Promise<QemuJail> {
    const cleanup = new Cleanup();
    const identity = config.pool.acquire();
    cleanup.add('free the jail uid', () => config.pool.release(identity));
    try {
      const helper = await config.helper();
      let plan: CgroupPlan | undefined;
      if (config.cgroups !== undefined) {
        plan = vmCgroupPlan(config.cgroups, `${id}-${identity.uid}`, {
          memoryBytes: (machine.memoryMiB + config.memoryOverheadMiB) * 2 ** 20,
          pidsMax: config.pidsMax,
          ...(config.cpuLimit ? { cpu: { vcpus: machine.vcpus, periodUs: 100_000 } } : {}),
        });
        await createVmCgroup(plan);
        const created = plan;
        cleanup.add('remove the cgroup', () => removeVmCgroup(created));
      }
      return new QemuJail(config, identity, helper, plan, cleanup);
    } catch (err) {
      await cleanup.run().catch(() => undefined);
      if (err instanceof AenvError) throw err;
      throw new AenvError('VMM_JAIL_FAILED', `cannot jail VM ${id}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /**
   * Makes `launch`'s files reachable from the jail: binds them back, gives
   * the VM's uid its NBD sockets and writable drives.
   * @throws {AenvError} `VMM_JAIL_FAILED`.
   */
  async admit(
    launch: QemuLaunch,
    runDir: string,
    env: Record<string, string> | undefined,
  ): Promise<void> {
    const m = launch.machine;
    const binds: JailBind[] = [
      { path: runDir, readOnly: false },
      { path: launch.memory.path, readOnly: false },
      { path: m.kernel, readOnly: true },
    ];
    if (m.initrd !== null) binds.push({ path: m.initrd, readOnly: true });
    if (env?.LD_PRELOAD !== undefined) binds.push({ path: env.LD_PRELOAD, readOnly: true });
    const { uid, gid } = this.identity;
    try {
      for (const d of m.drives) {
        if (d.source.kind === 'nbd') {
          await chown(d.source.socket, uid, gid);
          binds.push({ path: d.source.socket, readOnly: false });
          continue;
        }
        if (!d.readOnly && (await stat(d.source.path)).uid !== uid)
          await chown(d.source.path, uid, gid);
        binds.push({ path: d.source.path, readOnly: d.readOnly });
        if (d.source.format === 'qcow2') {
          for (const b of await qcow2BackingChain(d.source.path))
            binds.push({ path: b, readOnly: true });
        }
      }
    } catch (err) {
      if (err instanceof AenvError) throw err;
      throw new AenvError(
        'VMM_JAIL_FAILED',
        `cannot give VM ${launch.id} its drives: ${(err as Error).message}`,
        { cause: err },
      );
    }
    this.#binds = binds;
  }

  /** The jail helper's command line for `binary args` (see `jail-command.ts`). */
  command(
    binary: string,
    args: readonly string[],
    opts: { netns?: string; tap?: string; killWithParent: boolean },
  ): [string, string[]] {
    return jailCommand(
      {
        helper: this.#helper,
        identity: this.identity,
        ...(opts.netns === undefined ? {} : { netns: opts.netns }),
        cgroupProcs: this.cgroup?.procs ?? [],
        hide: this.#config.hide,
        binds: this.#binds,
        ...(opts.tap === undefined ? {} : { tap: { name: opts.tap, fd: JAIL_TAP_FD } }),
        killWithParent: opts.killWithParent,
      },
      binary,
      args,
    );
  }

  /**
   * The TCG code cache a jailed QEMU gets: half the memory overhead (at
   * least 32 MiB), so QEMU's own memory stays inside its limit.
   */
  get tcgCacheMiB(): number {
    return Math.max(32, Math.floor(this.#config.memoryOverheadMiB / 2));
  }

  /** Removes the cgroup and frees the uid (once QEMU has exited). */
  release(): Promise<void> {
    return this.#cleanup.run();
  }
}
