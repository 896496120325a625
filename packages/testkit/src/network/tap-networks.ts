/**
 * Throwaway networks for VM suites, one per VM: a network namespace with
 * `tap0`, addressed like every aenv slot (the guest is `169.254.100.2/30`,
 * the tap is its gateway `169.254.100.1` with the fixed gateway MAC), so a
 * snapshot taken in one namespace restores into any other without
 * re-addressing, as on a node. A probe agent in the namespace forwards a
 * unix socket to the guest's envd, so the test process (in the root
 * namespace) talks to envd with an {@link EnvdSocketClient}.
 *
 * Unlike a node's slots there is no veth, NAT or egress policy: the guest
 * reaches nothing but its tap. Every namespace starts with the factory's
 * prefix; `close()` removes every one it made, and `leftovers()` lets a
 * suite assert that nothing was left before that sweep.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ENVD_PORT } from '@aenv/guest';
import {
  GATEWAY_MAC,
  GUEST_GATEWAY,
  GUEST_IP,
  GUEST_MAC,
  GUEST_PREFIX_LENGTH,
  TAP_NAME,
  guestNetworkParams,
} from '@aenv/network';
import type { GuestParams, NetworkSpec } from '@aenv/vmm';
import { EnvdSocketClient } from '../envd/envd-socket-client.js';
import { startNetnsProbe, type Probe } from './probe.js';

const exec = promisify(execFile);

/** One VM's network, as a VMM driver and a test use it. */
export interface SuiteNetwork {
  /** Label given at creation. */
  readonly label: string;
  /** The driver's network spec: namespace, tap and the guest's MAC. */
  readonly spec: NetworkSpec;
  /** The guest's addressing, for boots (restores keep their snapshot's). */
  readonly guest: GuestParams;
  /** The guest's envd, through the namespace's forwarder. */
  readonly envd: EnvdSocketClient;
  /** Removes the namespace (and its tap) and the forwarder. Idempotent. */
  close(): Promise<void>;
}

/** Makes one {@link SuiteNetwork} per call; the VM suites take any such factory. */
export type NetworkFactory = (label: string) => Promise<SuiteNetwork>;

/** Why tap networks cannot be made here, or undefined when they can. */
export async function tapNetworkSkipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, taps)';
  for (const [tool, arg] of [
    ['ip', '-V'],
    ['nsenter', '--version'],
  ] as const) {
    try {
      await exec(tool, [arg]);
    } catch {
      return `needs ${tool} (scripts/apt-packages.txt)`;
    }
  }
  return undefined;
}

/** See the module comment. */
export class TapNetworks {
  /** Every namespace of this factory starts with this. */
  readonly prefix: string;
  readonly #socketDir: string;
  readonly #open = new Map<string, SuiteNetwork>();

  /**
   * @param socketDir where the envd sockets go (keep the path short: unix
   *   socket paths are limited to 107 bytes)
   * @param prefix namespace name prefix, unique per run (e.g. `tk<pid>`)
   */
  constructor(socketDir: string, prefix: string) {
    this.#socketDir = socketDir;
    this.prefix = prefix;
  }

  /** The factory form of {@link create}, for suite options. */
  get factory(): NetworkFactory {
    return (label) => this.create(label);
  }

  /** Creates `<prefix>-<label>` with `tap0` and an envd forwarder. */
  async create(label: string): Promise<SuiteNetwork> {
    const netns = `${this.prefix}-${label}`;
    await mkdir(this.#socketDir, { recursive: true });
    const socket = join(this.#socketDir, `${label}.envd`);
    await exec('ip', ['netns', 'add', netns]);
    let probe: Probe | undefined;
    const close = async (): Promise<void> => {
      this.#open.delete(label);
      await probe?.stop();
      await exec('ip', ['netns', 'del', netns]).catch(() => undefined);
      await rm(socket, { force: true });
    };
    try {
      await addTap(netns);
      probe = await startNetnsProbe(netns, label);
      const fwd = await probe.forward(socket, GUEST_IP, ENVD_PORT);
      if (fwd.outcome !== 'ok') throw new Error(`envd forwarder in ${netns}: ${fwd.code}`);
    } catch (err) {
      await close();
      throw err;
    }
    const net: SuiteNetwork = {
      label,
      spec: { netns, tap: TAP_NAME, mac: GUEST_MAC },
      guest: { hostname: label.replace(/[^A-Za-z0-9-]/g, '-'), ...guestNetworkParams() },
      envd: new EnvdSocketClient(socket),
      close,
    };
    this.#open.set(label, net);
    return net;
  }

  /** Namespaces of this factory that exist now. */
  async leftovers(): Promise<string[]> {
    const names = await readdir('/run/netns').catch(() => [] as string[]);
    return names.filter((n) => n.startsWith(`${this.prefix}-`));
  }

  /** Closes every network still open, then sweeps namespaces left by name. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#open.values()].map((n) => n.close()));
    for (const ns of await this.leftovers()) {
      await exec('ip', ['netns', 'del', ns]).catch(() => undefined);
    }
  }
}

async function addTap(netns: string): Promise<void> {
  const ip = (...args: string[]) => exec('ip', ['-n', netns, ...args]);
  await ip('link', 'set', 'lo', 'up');
  await ip('tuntap', 'add', 'dev', TAP_NAME, 'mode', 'tap');
  await ip('link', 'set', TAP_NAME, 'address', GATEWAY_MAC);
  await ip('addr', 'add', `${GUEST_GATEWAY}/${GUEST_PREFIX_LENGTH}`, 'dev', TAP_NAME);
  await ip('link', 'set', TAP_NAME, 'up');
}
