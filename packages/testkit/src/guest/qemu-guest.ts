/**
 * A REAL guest in a network slot, for network VM suites: QEMU (the `@aenv/vmm`
 * driver, TCG here) boots the guest artifacts inside `slot.netnsPath` on
 * `slot.tapName` with `GUEST_MAC` and `guestNetworkParams()`, the way the
 * node's `MicroVmLauncher` does. The test reaches the guest's envd from the
 * topology's "host" namespace at `slotIp:49983` (a unix socket forwarded by
 * the host probe, see `envd-socket-client.ts`), and runs the same probe agent
 * as the namespace probes INSIDE the guest through envd's process API: its
 * requests go in as stdin (`SendInput`), its answers come back on the
 * `Start` stream. Probes therefore leave from the guest's own kernel and NIC.
 *
 * Every boot step registers its undo in a `Cleanup`; `close()` runs them
 * (agent, VM, overlay directory), also after a failed boot.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  ENVD_PORT,
  INIT_STARTED_MARKER,
  TOOLS_LAYOUT,
  TOOLS_MOUNT,
  type GuestArtifacts,
} from '@aenv/guest';
import { GUEST_MAC, guestNetworkParams, type Slot } from '@aenv/network';
import { Cleanup } from '@aenv/shared';
import type { Vm, VmmDriver } from '@aenv/vmm';
import { EnvdSocketClient } from '../envd/envd-socket-client.js';
import { PROBE_AGENT_PATH, Probe } from '../network/probe.js';

const exec = promisify(execFile);

/** What {@link QemuGuest.boot} needs. */
export interface QemuGuestOptions {
  readonly driver: VmmDriver;
  readonly artifacts: GuestArtifacts & { readonly baseImage: string };
  readonly slot: Slot;
  /** Hostname and VM id suffix; `[a-z0-9-]`. */
  readonly label: string;
  /** A directory of the test's own; the guest's files go in `<dir>/<label>`. */
  readonly dir: string;
  /** A probe in the namespace the node's proxy would connect from (the topology's host). */
  readonly hostProbe: Probe;
}

/** Milestones of one boot, in ms from the start of `boot()`. */
export interface BootTimings {
  readonly vmmRunning: number;
  readonly envdHealthy: number;
  readonly probeReady: number;
}

/** The guest command line that runs node from the tools image (the tools drive's loader and libraries). */
export function guestNode(): string[] {
  const t = (p: string): string => `${TOOLS_MOUNT}/${p}`;
  return [t(TOOLS_LAYOUT.loader), '--library-path', t(TOOLS_LAYOUT.nodeLib), t(TOOLS_LAYOUT.node)];
}

/** A booted guest with envd reachable and a probe agent running inside. */
export class QemuGuest {
  readonly label: string;
  readonly slot: Slot;
  readonly vm: Vm;
  readonly envd: EnvdSocketClient;
  /** The probe agent inside the guest. */
  readonly probe: Probe;
  readonly timings: BootTimings;
  readonly #cleanup: Cleanup;

  private constructor(
    o: QemuGuestOptions,
    parts: { vm: Vm; envd: EnvdSocketClient; probe: Probe; timings: BootTimings },
    cleanup: Cleanup,
  ) {
    this.label = o.label;
    this.slot = o.slot;
    this.vm = parts.vm;
    this.envd = parts.envd;
    this.probe = parts.probe;
    this.timings = parts.timings;
    this.#cleanup = cleanup;
  }

  /** Boots the guest and starts its probe agent; leaves nothing behind when it fails. */
  static async boot(o: QemuGuestOptions): Promise<QemuGuest> {
    const t0 = performance.now();
    const since = (): number => Math.round(performance.now() - t0);
    await using cleanup = new Cleanup();
    const dir = join(o.dir, o.label);
    await mkdir(dir, { recursive: true });
    cleanup.add('remove guest dir', () => rm(dir, { recursive: true, force: true }));
    const rootfs = join(dir, 'rootfs.qcow2');
    // A copy-on-write overlay, so the shared base image stays untouched.
    const base = o.artifacts.baseImage;
    await exec('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', base, '-F', 'raw', rootfs]);
    const vm = await o.driver.boot({
      id: `netvm-${o.label}`,
      vcpus: 1,
      memoryMiB: 512,
      kernel: o.artifacts.kernel,
      initrd: o.artifacts.initrd,
      guest: { hostname: o.label, ...guestNetworkParams() },
      drives: [
        {
          id: o.artifacts.driveIds.rootfs,
          source: { kind: 'file', path: rootfs, format: 'qcow2' },
          readOnly: false,
        },
        {
          id: o.artifacts.driveIds.tools,
          source: { kind: 'file', path: o.artifacts.toolsImage, format: 'raw' },
          readOnly: true,
        },
      ],
      network: { netns: o.slot.netnsPath, tap: o.slot.tapName, mac: GUEST_MAC },
      runDir: join(dir, 'run'),
    });
    cleanup.add('stop vm', async () => void (await vm.stop({ graceMs: 0 })));
    const vmmRunning = since();
    const socket = join(dir, 'envd.sock');
    const fwd = await o.hostProbe.forward(socket, o.slot.slotIp, ENVD_PORT);
    if (fwd.outcome !== 'ok') throw new Error(`cannot forward envd: ${JSON.stringify(fwd)}`);
    await vm.waitForConsole(new RegExp(INIT_STARTED_MARKER), { timeoutMs: 120_000 });
    const envd = new EnvdSocketClient(socket);
    await envd.waitHealthy(60_000);
    const envdHealthy = since();
    const probe = await startGuestProbe(envd, o.label, cleanup);
    const timings = { vmmRunning, envdHealthy, probeReady: since() };
    return new QemuGuest(o, { vm, envd, probe, timings }, cleanup.move());
  }

  /** Stops the agent and the VM and removes the guest's files. */
  close(): Promise<void> {
    return this.#cleanup.run();
  }
}

/** Copies the probe agent into the guest and starts it there as envd's default user. */
async function startGuestProbe(
  envd: EnvdSocketClient,
  label: string,
  cleanup: Cleanup,
): Promise<Probe> {
  const source = (await readFile(PROBE_AGENT_PATH)).toString('base64');
  let pid = 0;
  let stopped: Promise<unknown> = Promise.resolve();
  const probe = new Probe(label, {
    send: (line) => envd.sendInput(pid, line),
    stop: async () => {
      // The agent exits when its stdin closes; a wedged guest must not hang the cleanup.
      await envd.closeStdin(pid).catch(() => undefined);
      await Promise.race([stopped, sleep(3000)]);
    },
  });
  const script = 'printf %s "$1" | base64 -d > "$2" && shift 2 && exec "$@"';
  const path = '/tmp/aenv-probe-agent.mjs';
  const proc = await envd.start(
    '/bin/bash',
    ['-c', script, 'probe', source, path, ...guestNode(), path, label],
    {
      stdin: true,
      onStdout: (c) => probe.receive(c.toString('utf8')),
      onStderr: (c) => process.stderr.write(`[${label} probe] ${c.toString('utf8')}`),
    },
  );
  pid = proc.pid;
  stopped = proc.ended.then(
    (end) => probe.fail(`agent ended: ${end.status}`),
    (err: unknown) => probe.fail(`agent stream broke: ${String(err)}`),
  );
  cleanup.add('stop guest probe', () => probe.stop());
  await probe.ready();
  return probe;
}
