/**
 * The test topology: everything a network test touches lives in namespaces
 * this lab creates and removes, never in the machine's own namespace.
 *
 * - `<id>-host` plays the node: slot managers under test run their commands
 *   there (`SlotManager.start({ netns })`); its uplink `up0` (192.0.2.1/24)
 *   leads to
 * - `<id>-world`, which plays the internet and the private ranges: it owns
 *   every address in {@link WORLD} and answers on them.
 * Slot namespaces are named by the managers' prefixes, which the lab hands
 * out ({@link NetnsLab.managerPrefix}) and sweeps on close as a safety net;
 * a test asserts that its manager left nothing before the sweep runs.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@aenv/shared';
import { run } from '../../src/command-runner.js';
import { networkConfigSchema, type NetworkConfig } from '../../src/network-config.js';
import { NetnsProbe, type Probe } from './probe-client.js';

/** Addresses the world namespace answers on. */
export const WORLD = Object.freeze({
  gateway: '192.0.2.2',
  hostUplink: '192.0.2.1',
  publicA: '203.0.113.10',
  publicA2: '203.0.113.11',
  publicB: '198.51.100.20',
  dns: '198.51.100.53',
  private10: '10.99.0.10',
  private172: '172.20.0.10',
  private192: '192.168.77.10',
  cgnat: '100.64.5.10',
  metadata: '169.254.169.254',
});

/** The TCP port every probe server listens on. */
export const SERVICE_PORT = 8080;

/** Why network tests cannot run here, or `undefined` when they can. */
export async function labSkipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, nftables)';
  for (const tool of [
    ['ip', '-V'],
    ['nft', '--version'],
    ['conntrack', '--version'],
    ['nsenter', '--version'],
  ]) {
    try {
      await run(tool);
    } catch {
      return `needs ${tool[0]} (scripts/apt-packages.txt)`;
    }
  }
  return undefined;
}

/** A host + world topology in fresh namespaces. */
export class NetnsLab {
  readonly id: string;
  readonly hostNetns: string;
  readonly worldNetns: string;
  readonly #netns: string[] = [];
  readonly #probes: Probe[] = [];
  readonly #prefixes: string[] = [];
  /** A temporary directory for the managers' prefix locks. */
  readonly lockDir: string;

  private constructor(id: string, lockDir: string) {
    this.id = id;
    this.lockDir = lockDir;
    this.hostNetns = `${id}-host`;
    this.worldNetns = `${id}-world`;
  }

  /** Creates the host and world namespaces and the uplink between them. */
  static async create(): Promise<NetnsLab> {
    const lockDir = await mkdtemp(join(tmpdir(), 'aenv-net-test-'));
    const lab = new NetnsLab(`z${randomBytes(3).toString('hex').slice(0, 4)}`, lockDir);
    try {
      await lab.addNetns(lab.hostNetns);
      await lab.addNetns(lab.worldNetns);
      const h = lab.hostNetns;
      const w = lab.worldNetns;
      const worldAddrs = Object.values(WORLD).filter(
        (a) => a !== WORLD.gateway && a !== WORLD.hostUplink,
      );
      await run(['sh', '-s'], {
        input: [
          'set -e',
          `ip -n ${h} link add up0 type veth peer name wp0 netns ${w}`,
          `ip -n ${h} addr add ${WORLD.hostUplink}/24 dev up0`,
          `ip -n ${h} link set up0 up`,
          `ip -n ${h} route add default via ${WORLD.gateway}`,
          `ip -n ${w} addr add ${WORLD.gateway}/24 dev wp0`,
          `ip -n ${w} link set wp0 up`,
          ...worldAddrs.map((a) => `ip -n ${w} addr add ${a}/32 dev lo`),
        ].join('\n'),
      });
    } catch (err) {
      await lab.close();
      throw err;
    }
    return lab;
  }

  /** A fresh slot-manager prefix, unique in this lab, swept on close. */
  managerPrefix(): string {
    const prefix = `${this.id}m${this.#prefixes.length}`;
    this.#prefixes.push(prefix);
    return prefix;
  }

  /** A `network` config for a manager in this lab: its own prefix, the world's DNS. */
  config(overrides: Partial<NetworkConfig> = {}): NetworkConfig {
    const base = loadConfig(networkConfigSchema, { env: {} });
    return {
      ...base,
      prefix: this.managerPrefix(),
      dnsServer: WORLD.dns,
      lockDir: this.lockDir,
      ...overrides,
    };
  }

  /** Creates a namespace (with `lo` up) that the lab deletes on close. */
  async addNetns(name: string): Promise<void> {
    await run(['ip', 'netns', 'add', name]);
    this.#netns.push(name);
    await run(['ip', '-n', name, 'link', 'set', 'lo', 'up']);
  }

  /** Starts a probe agent in a namespace; stopped on close. */
  async probe(netns: string, label: string): Promise<Probe> {
    const probe = await NetnsProbe.start(netns, label);
    this.#probes.push(probe);
    return probe;
  }

  /** Namespaces under /run/netns whose names start with one of this lab's manager prefixes. */
  async managerLeftovers(): Promise<string[]> {
    const names = await readdir('/run/netns').catch(() => [] as string[]);
    return names.filter((n) => this.#prefixes.some((p) => n.startsWith(`${p}-`)));
  }

  /** Stops probes and deletes every namespace of the lab, including leftovers of its managers. */
  async close(): Promise<void> {
    await Promise.allSettled(this.#probes.map((p) => p.stop()));
    const all = [...(await this.managerLeftovers()), ...this.#netns];
    await run(['ip', '-force', '-batch', '-'], {
      input: all.map((n) => `netns del ${n}`).join('\n') + '\n',
    }).catch(() => undefined);
    await rm(this.lockDir, { recursive: true, force: true });
  }
}
