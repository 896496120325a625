/**
 * Names and addresses of slots, derived from the node prefix and a slot
 * index alone. Nothing about a slot is stored anywhere else: after a crash,
 * the kernel objects' names are the whole record, which is what lets a
 * restarted daemon find (and re-adopt or remove) every leftover of its
 * previous run, and only its own (`<prefix>-` never matches another prefix,
 * because a prefix cannot contain `-`).
 *
 * Slot `i` owns the /30 at `addressPool + 4i`: `.1` is the host end of the
 * veth (the slot's gateway), `.2` the slot end, which is the slot's address
 * as the host sees it (DNAT to the guest, SNAT from it).
 *
 * @module
 */
import { formatIpv4, type Cidr } from './ipv4.js';
import type { NetworkSettings } from './network-config.js';

/** The directory `ip netns` keeps named network namespaces in. */
export const NETNS_DIR = '/run/netns';

/** Addresses of one slot. */
export interface SlotAddresses {
  /** The slot's /30. */
  readonly subnet: Cidr;
  /** The host end of the veth pair; the slot netns's default gateway. */
  readonly hostIp: string;
  /** The slot's address as the host sees it; connections to it reach the guest. */
  readonly slotIp: string;
}

/** Derives every name and address of a node's slots. */
export class SlotAddressing {
  readonly #prefix: string;
  readonly #pool: Cidr;
  readonly #netnsPattern: RegExp;
  readonly #interfacePattern: RegExp;

  constructor(settings: Pick<NetworkSettings, 'prefix' | 'addressPool'>) {
    this.#prefix = settings.prefix;
    this.#pool = settings.addressPool;
    this.#netnsPattern = new RegExp(`^${settings.prefix}-(0|[1-9]\\d*)$`);
    this.#interfacePattern = new RegExp(`^${settings.prefix}-v(0|[1-9]\\d*)$`);
  }

  /** The node prefix. */
  get prefix(): string {
    return this.#prefix;
  }

  /** The nftables table (family `inet`) holding every host-side rule of this node. */
  get tableName(): string {
    return `${this.#prefix}_slots`;
  }

  /** An nftables wildcard matching every host-side veth of this node. */
  get interfaceGlob(): string {
    return `${this.#prefix}-v*`;
  }

  /** The name of slot `index`'s network namespace. */
  netnsName(index: number): string {
    return `${this.#prefix}-${index}`;
  }

  /** The bind-mount path of slot `index`'s network namespace (for `nsenter --net=`). */
  netnsPath(index: number): string {
    return `${NETNS_DIR}/${this.netnsName(index)}`;
  }

  /** The host end of slot `index`'s veth pair. */
  hostInterface(index: number): string {
    return `${this.#prefix}-v${index}`;
  }

  /** The addresses of slot `index`. */
  addresses(index: number): SlotAddresses {
    const base = this.#pool.base + index * 4;
    return {
      subnet: { base, prefix: 30 },
      hostIp: formatIpv4(base + 1),
      slotIp: formatIpv4(base + 2),
    };
  }

  /** The index named by a netns name of this node, or `undefined`. */
  indexOfNetns(name: string): number | undefined {
    const m = this.#netnsPattern.exec(name);
    return m?.[1] === undefined ? undefined : Number(m[1]);
  }

  /** The index named by a host interface name of this node, or `undefined`. */
  indexOfInterface(name: string): number | undefined {
    const m = this.#interfacePattern.exec(name);
    return m?.[1] === undefined ? undefined : Number(m[1]);
  }
}
