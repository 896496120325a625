/**
 * Slots as the rest of aenv sees them.
 *
 * A {@link Slot} is a lease: `SlotManager.acquire` returns a new one each
 * time, and it stops being valid when released, even though the kernel
 * objects behind it (a {@link SlotResource}) go back to the pool and are
 * leased again later. A stale lease can therefore never change the policy of
 * the sandbox that holds the slot next.
 *
 * The VMM driver runs the VMM inside `netnsPath` and attaches the guest NIC
 * (MAC `GUEST_MAC`) to the tap `tapName`; the proxy reaches guest ports at
 * `slotIp`.
 *
 * @module
 */
import type { EgressPolicy } from './egress-policy.js';
import { TAP_NAME } from './guest-network.js';
import type { SlotAddressing } from './slot-addressing.js';

/**
 * What a daemon stores to re-adopt a slot after a restart (`SlotManager`'s
 * `adopt` option). Plain, JSON-safe data.
 */
export interface SlotRecord {
  readonly index: number;
  readonly policy: EgressPolicy;
}

/** One sandbox's network slot. */
export interface Slot {
  /** The slot index (`slot.id` in events). */
  readonly index: number;
  /** Name of the slot's network namespace (`ip netns exec <name>`). */
  readonly netnsName: string;
  /** Bind-mount path of the namespace (`nsenter --net=<path>`, QEMU's netns). */
  readonly netnsPath: string;
  /** The tap inside the namespace that the guest NIC attaches to. */
  readonly tapName: string;
  /** The host end of the slot's veth pair. */
  readonly hostInterface: string;
  /** The host's address on the slot link (what the guest sees as the host). */
  readonly hostIp: string;
  /** The slot's address on the host: connecting to it reaches the guest. */
  readonly slotIp: string;
  /** The egress policy in force. */
  readonly policy: EgressPolicy;
  /** The record that re-adopts this slot after a daemon restart. */
  save(): SlotRecord;
}

/** The kernel objects of one slot, reused across leases. Internal. */
export class SlotResource {
  readonly index: number;
  policy: EgressPolicy;
  /** No policy rules are installed (fresh or scrubbed): nothing gets out. */
  pristine: boolean;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(index: number, policy: EgressPolicy, pristine: boolean) {
    this.index = index;
    this.policy = policy;
    this.pristine = pristine;
  }

  /** Runs `op` after every operation queued before it on this slot. */
  serialize<T>(op: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(op, op);
    this.#queue = result.catch(() => undefined);
    return result;
  }
}

/** A lease on a {@link SlotResource}. Internal; callers see {@link Slot}. */
export class SlotLease implements Slot {
  readonly index: number;
  readonly netnsName: string;
  readonly netnsPath: string;
  readonly tapName = TAP_NAME;
  readonly hostInterface: string;
  readonly hostIp: string;
  readonly slotIp: string;
  readonly #resource: SlotResource;
  /** The policy at release; a released lease no longer follows the resource. */
  #final: EgressPolicy | undefined;

  constructor(resource: SlotResource, addressing: SlotAddressing) {
    const i = resource.index;
    this.#resource = resource;
    this.index = i;
    this.netnsName = addressing.netnsName(i);
    this.netnsPath = addressing.netnsPath(i);
    this.hostInterface = addressing.hostInterface(i);
    const { hostIp, slotIp } = addressing.addresses(i);
    this.hostIp = hostIp;
    this.slotIp = slotIp;
  }

  get policy(): EgressPolicy {
    return this.#final ?? this.#resource.policy;
  }

  save(): SlotRecord {
    return { index: this.index, policy: this.policy };
  }

  /** Called on release: the lease stops reflecting whoever holds the slot next. */
  detach(): void {
    this.#final ??= this.#resource.policy;
  }

  toJSON(): Record<string, unknown> {
    return {
      index: this.index,
      netnsName: this.netnsName,
      netnsPath: this.netnsPath,
      tapName: this.tapName,
      hostInterface: this.hostInterface,
      hostIp: this.hostIp,
      slotIp: this.slotIp,
      policy: this.policy,
    };
  }
}
