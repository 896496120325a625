/**
 * The test topology of network VM suites (a port of the network package's
 * `test/support/netns-lab.ts`, which no other package may import): everything a test touches lives in
 * namespaces this topology creates and removes, never in the machine's own.
 *
 * - `<id>-host` plays the node: the slot manager under test runs its
 *   commands there (`SlotManager.start({ netns })`), so its table, veths and
 *   routes exist only there; its uplink `up0` (192.0.2.1/24) leads to
 * - `<id>-world`, which plays the internet and the private ranges: it owns
 *   every address in {@link WORLD} and answers on them.
 *
 * Slot namespaces are named by the manager's prefix, which the topology
 * hands out ({@link NetnsTopology.managerPrefix}, always `<id>m<n>`) so that
 * everything of one run starts with `<id>` and {@link NetnsTopology.leftovers}
 * finds it. `close()` sweeps it as a safety net; suites assert that nothing
 * was left before the sweep runs.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { networkConfigSchema, type NetworkConfig } from '@aenv/network';
import { loadConfig } from '@aenv/shared';
import { startNetnsProbe, type Probe } from './probe.js';

const exec = promisify(execFile);

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
/** A second port the world listens on, for port-scoped rules. */
export const OTHER_PORT = 8081;

/** Runs a shell script; `set -e` applies. */
export async function sh(script: string): Promise<string> {
  const { stdout } = await exec('sh', ['-ec', script]);
  return stdout;
}

/** Why a topology cannot be built here, or `undefined` when it can. */
export async function topologySkipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, nftables)';
  for (const tool of [
    ['ip', '-V'],
    ['nft', '--version'],
    ['conntrack', '--version'],
    ['nsenter', '--version'],
  ] as const) {
    try {
      await exec(tool[0], [tool[1]]);
    } catch {
      return `needs ${tool[0]} (scripts/apt-packages.txt)`;
    }
  }
  return undefined;
}

/** A host + world topology in fresh namespaces. */
export class NetnsTopology {
  readonly id: string;
  readonly hostNetns: string;
  readonly worldNetns: string;
  /** A temporary directory for prefix locks, sockets and guest files; removed on close. */
  readonly workDir: string;
  readonly #netns: string[] = [];
  readonly #probes: Probe[] = [];
  #prefixes = 0;

  private constructor(id: string, workDir: string) {
    this.id = id;
    this.workDir = workDir;
    this.hostNetns = `${id}-host`;
    this.worldNetns = `${id}-world`;
  }

  /** Creates the host and world namespaces and the uplink between them. */
  static async create(): Promise<NetnsTopology> {
    const workDir = await mkdtemp(join(tmpdir(), 'aenv-topo-'));
    const topo = new NetnsTopology(`y${randomBytes(2).toString('hex')}`, workDir);
    try {
      await topo.addNetns(topo.hostNetns);
      await topo.addNetns(topo.worldNetns);
      const h = topo.hostNetns;
      const w = topo.worldNetns;
      const served = Object.values(WORLD).filter(
        (a) => a !== WORLD.gateway && a !== WORLD.hostUplink,
      );
      await sh(
        [
          `ip -n ${h} link add up0 type veth peer name wp0 netns ${w}`,
          `ip -n ${h} addr add ${WORLD.hostUplink}/24 dev up0`,
          `ip -n ${h} link set up0 up`,
          `ip -n ${h} route add default via ${WORLD.gateway}`,
          `ip -n ${w} addr add ${WORLD.gateway}/24 dev wp0`,
          `ip -n ${w} link set wp0 up`,
          ...served.map((a) => `ip -n ${w} addr add ${a}/32 dev lo`),
        ].join('\n'),
      );
    } catch (err) {
      await topo.close();
      throw err;
    }
    return topo;
  }

  /** A fresh slot-manager prefix, unique in this topology (`<id>m<n>`). */
  managerPrefix(): string {
    return `${this.id}m${this.#prefixes++}`;
  }

  /** A `network` config for a manager here: its own prefix, the world's DNS, locks in workDir. */
  config(overrides: Partial<NetworkConfig> = {}): NetworkConfig {
    return {
      ...loadConfig(networkConfigSchema, { env: {} }),
      prefix: this.managerPrefix(),
      dnsServer: WORLD.dns,
      lockDir: join(this.workDir, 'locks'),
      ...overrides,
    };
  }

  /** Creates a namespace (with `lo` up) that is deleted on close. */
  async addNetns(name: string): Promise<void> {
    await exec('ip', ['netns', 'add', name]);
    this.#netns.push(name);
    await exec('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  }

  /** Starts a probe agent in a namespace; stopped on close. */
  async probe(netns: string, label: string): Promise<Probe> {
    const probe = await startNetnsProbe(netns, label);
    this.#probes.push(probe);
    return probe;
  }

  /** Namespaces under /run/netns that belong to this run (its own and its managers'). */
  async leftovers(): Promise<string[]> {
    const names = await readdir('/run/netns').catch(() => [] as string[]);
    return names.filter((n) => n.startsWith(this.id));
  }

  /** Stops probes and deletes every namespace of the run, then the work directory. */
  async close(): Promise<void> {
    await Promise.allSettled(this.#probes.map((p) => p.stop()));
    const all = [...new Set([...(await this.leftovers()), ...this.#netns])];
    if (all.length > 0) {
      await sh(all.map((n) => `ip netns del ${n} || true`).join('\n')).catch(() => undefined);
    }
    await rm(this.workDir, { recursive: true, force: true });
  }
}
