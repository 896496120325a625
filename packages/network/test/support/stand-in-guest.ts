/**
 * Guests for network tests, behind one interface so the reachability matrix
 * runs against whatever can be a guest here.
 *
 * {@link StandInGuests} is a STAND-IN for a VM: a namespace wired to the slot
 * the way a VM's NIC is. The slot's `tap0` is replaced by a veth pair of the
 * same name, address and MAC whose other end, `eth0` in the stand-in
 * namespace, has the guest's fixed address, MAC and default route, exactly
 * what the guest init configures from `guestKernelArgs()`. Everything else
 * (the slot netns rules, the host table) is the real thing. Real QEMU
 * guests booted in `slot.netnsPath` on `slot.tapName` with `GUEST_MAC` run
 * the same probes in `packages/testkit/test/network/reachability.vm.test.ts`.
 *
 * @module
 */
import { run } from '../../src/command-runner.js';
import {
  GATEWAY_MAC,
  GUEST_GATEWAY,
  GUEST_IP,
  GUEST_MAC,
  GUEST_PREFIX_LENGTH,
} from '../../src/guest-network.js';
import type { Slot } from '../../src/slot.js';
import type { NetnsLab } from './netns-lab.js';
import type { Probe } from './probe-client.js';

/** The port envd listens on in a real guest; the stand-in listens there too. */
export const ENVD_PORT = 49983;

/** A guest running in a slot. */
export interface TestGuest {
  readonly label: string;
  /** Probes from inside the guest; it already listens on {@link ENVD_PORT}. */
  readonly probe: Probe;
  /** Stops the guest and unwires it from the slot. */
  close(): Promise<void>;
}

/** Starts guests in slots. */
export interface GuestFactory {
  /** What kind of guest this is, for test names. */
  readonly kind: string;
  start(slot: Slot, label: string): Promise<TestGuest>;
}

/** STAND-IN guests: namespaces wired to the slot's tap position (see module doc). */
export class StandInGuests implements GuestFactory {
  readonly kind = 'stand-in namespace';
  readonly #lab: NetnsLab;
  #count = 0;

  constructor(lab: NetnsLab) {
    this.#lab = lab;
  }

  async start(slot: Slot, label: string): Promise<TestGuest> {
    const ns = `${this.#lab.id}-g${this.#count++}`;
    await this.#lab.addNetns(ns);
    const s = slot.netnsName;
    const tap = slot.tapName;
    await run(['sh', '-s'], {
      input: [
        'set -e',
        `ip -n ${s} link del ${tap}`,
        `ip -n ${s} link add ${tap} type veth peer name eth0 netns ${ns}`,
        `ip -n ${s} link set ${tap} address ${GATEWAY_MAC}`,
        `ip -n ${s} addr add ${GUEST_GATEWAY}/${GUEST_PREFIX_LENGTH} dev ${tap}`,
        `ip -n ${s} link set ${tap} up`,
        `ip -n ${ns} link set eth0 address ${GUEST_MAC}`,
        `ip -n ${ns} addr add ${GUEST_IP}/${GUEST_PREFIX_LENGTH} dev eth0`,
        `ip -n ${ns} link set eth0 up`,
        `ip -n ${ns} route add default via ${GUEST_GATEWAY}`,
      ].join('\n'),
    });
    const probe = await this.#lab.probe(ns, label);
    const listening = await probe.listen(ENVD_PORT);
    if (listening.outcome !== 'ok')
      throw new Error(`stand-in ${label} cannot listen: ${listening.code}`);
    return {
      label,
      probe,
      close: async () => {
        await probe.stop();
        await run(['ip', 'netns', 'del', ns]);
      },
    };
  }
}
