/**
 * The kernel side of a node's slots: builds, scrubs, re-checks and destroys
 * them, installs the host table and applies policies, by driving `ip`,
 * `nft`, `conntrack` and `sh` through a {@link CommandRunner}.
 *
 * Contracts:
 * - `build` creates whole slots or nothing: each step registers its undo in a
 *   `Cleanup` before it runs (the undo is the tolerant `destroy`, which also
 *   removes what a half-done step left), so a failure leaks no namespace,
 *   interface or rule;
 * - `destroy` is idempotent and tolerant of half-built slots; it then lists
 *   what is left and fails if any of the slots' objects survived;
 * - a slot comes out of `build` and `scrub` with the deny-all policy; only
 *   `applyPolicy` lets traffic out;
 * - conntrack entries of a slot's /30 are deleted whenever the slot is
 *   built, scrubbed or destroyed, so no flow outlives its sandbox.
 *
 * @module
 */
import { readdir } from 'node:fs/promises';
import { AenvError, Cleanup } from '@aenv/shared';
import type { CommandRunner } from './command-runner.js';
import type { EgressPolicy } from './egress-policy.js';
import {
  renderConntrackScrub,
  renderHostBuild,
  renderLinkDestroy,
  renderNetnsDestroy,
} from './host-links.js';
import {
  renderHostTable,
  renderSlotAdd,
  renderSlotClear,
  renderSlotDelete,
  renderSlotPolicy,
  renderTableDelete,
  type SlotRules,
} from './host-ruleset.js';
import { parseIpv4, rangeOf, type Cidr } from './ipv4.js';
import type { NetworkSettings } from './network-config.js';
import { NETNS_DIR, SlotAddressing } from './slot-addressing.js';
import { renderSlotNetnsEnsure, renderSlotNetnsScrub, renderSlotNetnsSetup } from './slot-netns.js';

/** How many slot netns scripts run at once during a batch build. */
const NETNS_CONCURRENCY = 4;

/** How long `destroy` waits for the kernel to tear namespaces down before deleting veths itself. */
const TEARDOWN_WAIT_MS = 3000;

/** Which conntrack entries `destroy` deletes. */
export type ConntrackScope = 'slots' | 'pool';

/** Drives the kernel objects of one node's slots. */
export class HostNetwork {
  readonly addressing: SlotAddressing;
  readonly #settings: NetworkSettings;
  readonly #runner: CommandRunner;
  readonly #dnsServer: string | undefined;
  #tableInstalled = false;

  constructor(settings: NetworkSettings, runner: CommandRunner, dnsServer: string | undefined) {
    this.#settings = settings;
    this.#runner = runner;
    this.#dnsServer = dnsServer;
    this.addressing = new SlotAddressing(settings);
  }

  /**
   * Checks the tools and turns on IPv4 forwarding in the host namespace
   * (slots are routed through it).
   * @throws {AenvError} `NET_COMMAND_FAILED` when a tool is missing or not permitted.
   */
  async prepare(): Promise<void> {
    await this.#runner.host(['sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
    await this.#runner.host(['nft', 'list', 'tables']);
    await this.#runner.host(['conntrack', '--version']);
  }

  /** Replaces the node's table with one holding the rules of `slots`, atomically. */
  async installTable(slots: readonly SlotRules[]): Promise<void> {
    const input = {
      addressing: this.addressing,
      addressPool: this.#settings.addressPool,
      allowPrivateRanges: this.#settings.allowPrivateRanges,
      deniedRanges: this.#settings.deniedRanges,
      dnsServer: this.#dnsServer,
    };
    await this.#runner.host(['nft', '-f', '-'], { input: renderHostTable(input, slots) });
    this.#tableInstalled = true;
  }

  /** Removes the node's table and every rule in it. */
  async removeTable(): Promise<void> {
    await this.#runner.host(['nft', '-f', '-'], { input: renderTableDelete(this.addressing) });
    this.#tableInstalled = false;
  }

  /**
   * Builds slots, without a policy (so nothing gets out). All or nothing.
   * @throws {AenvError} `NET_COMMAND_FAILED` (after undoing every step).
   */
  async build(indices: readonly number[]): Promise<void> {
    if (indices.length === 0) return;
    const cleanup = new Cleanup();
    try {
      cleanup.add('remove namespaces and veths', () => this.#destroyLinks(indices));
      await this.#runner.host(['ip', '-batch', '-'], {
        input: renderHostBuild(this.addressing, indices),
      });
      cleanup.add('remove slot rules', () => this.#deleteRules(indices));
      const rules = indices.map((i) => renderSlotAdd(this.addressing, i));
      await this.#runner.host(['nft', '-f', '-'], { input: rules.join('\n') + '\n' });
      await forEachLimited(indices, NETNS_CONCURRENCY, (i) => this.#setupNetns(i));
    } catch (err) {
      await cleanup.run().catch((undoErr: unknown) => {
        throw new AenvError('NET_COMMAND_FAILED', 'slot build failed and its undo failed too', {
          cause: new AggregateError([err, undoErr]),
          fields: { slots: indices.join(',') },
        });
      });
      throw err;
    }
  }

  /**
   * Removes slots: rules, veths, namespaces, conntrack entries. Idempotent.
   * @throws {AenvError} `NET_COMMAND_FAILED` when something of theirs is left.
   */
  async destroy(indices: readonly number[], conntrack: ConntrackScope = 'slots'): Promise<void> {
    if (indices.length === 0) return;
    if (this.#tableInstalled) await this.#deleteRules(indices);
    await this.#destroyLinks(indices);
    if (conntrack === 'pool') await this.scrubConntrackNetworks([this.#settings.addressPool]);
    else await this.#scrubConntrack(indices);
  }

  /**
   * Returns a released slot to the state `build` left it in: no policy, a
   * fresh tap, no neighbour or conntrack state.
   */
  async scrub(index: number): Promise<void> {
    await Promise.all([
      this.#runner.host(['nft', '-f', '-'], {
        input: renderSlotClear(this.addressing, index) + '\n',
      }),
      this.#runner.inNetns(this.addressing.netnsPath(index), ['sh', '-s'], {
        input: renderSlotNetnsScrub(),
      }),
      this.#scrubConntrack([index]),
    ]);
  }

  /**
   * Replaces a slot's egress policy in one nft transaction.
   * @param pristine the slot has no policy yet (built or scrubbed since), so
   *   the transaction only adds rules, which commits several times faster.
   */
  async applyPolicy(index: number, policy: EgressPolicy, pristine = false): Promise<void> {
    await this.#runner.host(['nft', '-f', '-'], {
      input: renderSlotPolicy(this.addressing, index, policy, pristine),
    });
  }

  /**
   * Re-checks a slot left by a previous run; `false` when it is unusable
   * (its veth or tap is gone).
   */
  async ensure(index: number): Promise<boolean> {
    const host = this.addressing.hostInterface(index);
    const { hostIp } = this.addressing.addresses(index);
    try {
      await this.#runner.host(['ip', '-batch', '-'], {
        input: `link set ${host} up\naddr replace ${hostIp}/30 dev ${host}\n`,
      });
      await this.#runner.inNetns(this.addressing.netnsPath(index), ['sh', '-s'], {
        input: renderSlotNetnsEnsure(this.addressing.addresses(index), this.#dnsServer),
      });
      return true;
    } catch (err) {
      if (err instanceof AenvError && err.code === 'NET_COMMAND_FAILED') return false;
      throw err;
    }
  }

  /** Indices of every slot object of this node's prefix that exists now. */
  async discover(): Promise<number[]> {
    const found = new Set<number>();
    for (const name of await listNetns()) {
      const i = this.addressing.indexOfNetns(name);
      if (i !== undefined) found.add(i);
    }
    for (const name of await this.#listLinks()) {
      const i = this.addressing.indexOfInterface(name);
      if (i !== undefined) found.add(i);
    }
    return [...found].sort((a, b) => a - b);
  }

  /** Deletes host conntrack entries from or to whole networks (e.g. the address pool). */
  async scrubConntrackNetworks(networks: readonly Cidr[]): Promise<void> {
    await this.#runner.host(['sh', '-s'], { input: renderConntrackScrub(networks) });
  }

  async #setupNetns(index: number): Promise<void> {
    await this.#runner.inNetns(this.addressing.netnsPath(index), ['sh', '-s'], {
      input: renderSlotNetnsSetup(this.addressing.addresses(index), this.#dnsServer),
    });
  }

  async #deleteRules(indices: readonly number[]): Promise<void> {
    const script = indices.map((i) => renderSlotDelete(this.addressing, i)).join('\n') + '\n';
    await this.#runner.host(['nft', '-f', '-'], { input: script });
  }

  async #destroyLinks(indices: readonly number[]): Promise<void> {
    const batch = (input: string): Promise<unknown> =>
      this.#runner.host(['ip', '-force', '-batch', '-'], { input }).catch(() => undefined);
    await batch(renderNetnsDestroy(this.addressing, indices));
    let left = await this.#remaining(indices);
    const deadline = Date.now() + TEARDOWN_WAIT_MS;
    for (
      let pause = 5;
      left.length > 0 && Date.now() < deadline;
      pause = Math.min(pause * 2, 100)
    ) {
      await sleep(pause);
      left = await this.#remaining(left);
    }
    if (left.length > 0) {
      // A namespace something still holds (a VM that was not stopped) is not
      // torn down; cut its link to the host at least.
      await batch(
        renderLinkDestroy(this.addressing, left) + renderNetnsDestroy(this.addressing, left),
      );
      left = await this.#remaining(left);
    }
    if (left.length > 0) {
      throw new AenvError('NET_COMMAND_FAILED', `could not remove slots ${left.join(', ')}`, {
        fields: { slots: left.join(',') },
      });
    }
  }

  async #remaining(indices: readonly number[]): Promise<number[]> {
    const wanted = new Set(indices);
    return (await this.discover()).filter((i) => wanted.has(i));
  }

  /**
   * Deletes the conntrack entries of slots' /30s. Each `conntrack -D` costs
   * a process and a table walk, so for more than two slots the table is
   * listed once and only the slots that appear in it are deleted.
   */
  async #scrubConntrack(indices: readonly number[]): Promise<void> {
    let subnets = indices.map((i) => this.addressing.addresses(i).subnet);
    if (subnets.length > 2) {
      const { stdout } = await this.#runner.host(['conntrack', '-L']);
      subnets = subnetsIn(stdout, subnets);
    }
    if (subnets.length > 0) await this.scrubConntrackNetworks(subnets);
  }

  async #listLinks(): Promise<string[]> {
    const { stdout } = await this.#runner.host(['ip', '-j', 'link', 'show']);
    const links = JSON.parse(stdout || '[]') as { ifname?: string }[];
    return links.flatMap((l) => (typeof l.ifname === 'string' ? [l.ifname] : []));
  }
}

async function listNetns(): Promise<string[]> {
  try {
    return await readdir(NETNS_DIR);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** The subnets that an address in a `conntrack -L` listing falls into. */
export function subnetsIn(listing: string, subnets: readonly Cidr[]): Cidr[] {
  const seen = new Set<number>();
  for (const m of listing.matchAll(/(?:src|dst)=(\d+\.\d+\.\d+\.\d+)/g)) {
    const ip = parseIpv4(m[1] as string);
    if (ip !== undefined) seen.add(ip);
  }
  return subnets.filter((net) => {
    const { first, last } = rangeOf(net);
    for (let a = first; a <= last; a++) if (seen.has(a)) return true;
    return false;
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item).catch((err: unknown) => errors.push(err));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (errors.length > 0) throw errors[0];
}
