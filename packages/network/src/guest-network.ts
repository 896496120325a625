/**
 * The network every guest sees: one fixed address plan, identical in every
 * slot. This is part of the snapshot ABI: a memory snapshot taken in one slot
 * resumes in any other without re-addressing, because the guest's address,
 * gateway, DNS server and both MAC addresses never change. Each slot's netns
 * translates between this plan and the slot's own host-side address.
 *
 * The guest side (guest init) receives these values on the kernel command
 * line (`aenv.ip=`, `aenv.gw=`, `aenv.dns=`, see {@link guestKernelArgs});
 * the VMM driver gives the guest NIC {@link GUEST_MAC} and attaches it to the
 * tap named {@link TAP_NAME} inside the slot's netns. Why these values:
 * `docs/networking.md` ("Guest address plan").
 *
 * @module
 */

/** The guest's eth0 address, the same in every sandbox. */
export const GUEST_IP = '169.254.100.2';

/** Prefix length of the guest link: a /30 holding only the guest and its gateway. */
export const GUEST_PREFIX_LENGTH = 30;

/** The link network between guest and slot netns, `169.254.100.0/30`. */
export const GUEST_LINK_CIDR = '169.254.100.0/30';

/** The guest's default gateway: the tap's address inside the slot netns. */
export const GUEST_GATEWAY = '169.254.100.1';

/**
 * The DNS server the guest uses. It is the gateway; the slot netns forwards
 * port 53 to the node's resolver, so the guest never needs to know it.
 */
export const GUEST_DNS = GUEST_GATEWAY;

/** The MAC address of the guest NIC (locally administered, unicast). */
export const GUEST_MAC = '02:ae:00:00:00:02';

/**
 * The MAC address of the tap (the guest's gateway). Fixed so that a restored
 * guest's ARP cache entry for its gateway stays valid in another slot: a tap
 * drops frames addressed to any other MAC.
 */
export const GATEWAY_MAC = '02:ae:00:00:00:01';

/** The tap device inside every slot netns that the VMM attaches the guest NIC to. */
export const TAP_NAME = 'tap0';

/** The slot end of the veth pair, inside every slot netns. */
export const SLOT_VETH_NAME = 'veth0';

/**
 * The kernel command-line arguments that tell the guest init its network:
 * `aenv.ip=169.254.100.2/30 aenv.gw=169.254.100.1 aenv.dns=169.254.100.1`.
 */
export function guestKernelArgs(): string[] {
  return [
    `aenv.ip=${GUEST_IP}/${GUEST_PREFIX_LENGTH}`,
    `aenv.gw=${GUEST_GATEWAY}`,
    `aenv.dns=${GUEST_DNS}`,
  ];
}

/** The guest's addressing as the VMM driver's guest parameters take it. */
export interface GuestNetworkParams {
  /** `169.254.100.2/30`. */
  readonly address: string;
  readonly gateway: string;
  readonly dns: readonly string[];
}

/**
 * The guest's addressing in the shape the VMM driver's `GuestParams` take
 * (`address`, `gateway`, `dns`), which it renders as `aenv.ip=`, `aenv.gw=`
 * and `aenv.dns=`.
 */
export function guestNetworkParams(): GuestNetworkParams {
  return {
    address: `${GUEST_IP}/${GUEST_PREFIX_LENGTH}`,
    gateway: GUEST_GATEWAY,
    dns: [GUEST_DNS],
  };
}
