/**
 * Whether and how the qemu driver jails QEMU, from configuration and the
 * host: the jail needs Linux and root (it creates namespaces and cgroups and
 * changes uids); elsewhere it is off and the reason is published and
 * returned, not thrown. Cgroup limits need the cpu/memory/pids controllers
 * (v2 preferred, v1 otherwise); without them the jail runs without limits
 * and says so.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import type { VmmConfig } from '../config.js';
import { publishJail } from '../events.js';
import { JailUidPool } from '../jail/jail-uid-pool.js';
import { detectCgroups, removeStaleVmCgroups, type CgroupHost } from '../jail/vm-cgroup.js';
import { buildNativeHelper } from './private-ram-helper.js';
import type { QemuJailConfig } from './qemu-jail.js';

/** The jail helper's C source, shipped with the package. */
export const JAIL_HELPER_SOURCE = fileURLToPath(
  new URL('../../../native/aenv-vmm-jail.c', import.meta.url),
);

/** What the decision depends on besides the configuration. */
export interface JailHostFacts {
  readonly platform: NodeJS.Platform;
  readonly uid: number | undefined;
}

/** Pure: whether the jail is on, and why (one line). */
export function jailDecision(
  enabled: boolean,
  host: JailHostFacts,
): { on: boolean; reason: string } {
  if (!enabled) return { on: false, reason: 'jail off: vmm.jail is false' };
  if (host.platform !== 'linux')
    return { on: false, reason: `jail off: not Linux (${host.platform})` };
  if (host.uid !== 0)
    return { on: false, reason: `jail off: the daemon runs as uid ${host.uid ?? '?'}, not root` };
  return { on: true, reason: 'jail on' };
}

function cgroupWords(cg: CgroupHost | undefined): string {
  return cg === undefined
    ? 'no cgroup controllers found: no cpu/memory/pids limits'
    : `cgroup v${cg.version}`;
}

/**
 * The jail configuration of the qemu driver, or undefined when it is off;
 * `reason` says which, and is published on `aenv:vmm:jail`.
 */
export async function qemuJailConfig(
  config: VmmConfig,
  extraHide: readonly string[] = [],
  host: JailHostFacts = { platform: process.platform, uid: process.getuid?.() },
  cgroupBase?: string,
): Promise<{ jail: QemuJailConfig | undefined; reason: string }> {
  const decision = jailDecision(config.jail, host);
  if (!decision.on) {
    publishJail('qemu', false, decision.reason);
    return { jail: undefined, reason: decision.reason };
  }
  const cgroups = await detectCgroups(cgroupBase);
  if (cgroups !== undefined) await removeStaleVmCgroups(cgroups);
  let helper: Promise<string> | undefined;
  const jail: QemuJailConfig = {
    pool: new JailUidPool(config.jailUidBase, config.jailUidCount),
    helper: () => {
      helper ??= buildNativeHelper(config.qemuHelperDir, {
        source: JAIL_HELPER_SOURCE,
        name: 'aenv-vmm-jail',
        kind: 'program',
      });
      helper.catch(() => (helper = undefined));
      return helper;
    },
    hide: [...new Set([...config.jailHide, ...extraHide])],
    cgroups,
    memoryOverheadMiB: config.jailMemoryOverheadMiB,
    cpuLimit: config.jailCpuLimit,
    pidsMax: config.jailPidsMax,
  };
  const reason = `jail on (uids ${config.jailUidBase + 1}+${config.jailUidCount}, ${cgroupWords(cgroups)})`;
  publishJail('qemu', true, reason);
  return { jail, reason };
}
