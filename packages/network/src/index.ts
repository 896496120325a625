/**
 * `@aenv/network`: network slots for sandboxes. A slot is a network
 * namespace with a tap for the VM, a veth pair to the host, a host-side
 * address from the node's pool and the rules that connect them, including
 * the sandbox's egress policy. See `docs/networking.md`.
 *
 * @module
 */
export {
  DEFAULT_EGRESS_POLICY,
  DENY_ALL_EGRESS_POLICY,
  MAX_EGRESS_ENTRIES,
  checkEgressPolicy,
  formatEgressTarget,
  parseEgressList,
  parseEgressTarget,
  type EgressPolicy,
  type EgressTarget,
  type PortRange,
} from './egress-policy.js';
export { NETWORK_CHANNELS, type EventMessage, type NetworkEvent } from './events.js';
export {
  GATEWAY_MAC,
  GUEST_DNS,
  GUEST_GATEWAY,
  GUEST_IP,
  GUEST_LINK_CIDR,
  GUEST_MAC,
  GUEST_PREFIX_LENGTH,
  SLOT_VETH_NAME,
  TAP_NAME,
  guestKernelArgs,
  guestNetworkParams,
  type GuestNetworkParams,
} from './guest-network.js';
export { ALWAYS_DENIED_RANGES, PRIVATE_RANGES } from './host-ruleset.js';
export {
  networkConfigSchema,
  resolveNetworkSettings,
  type NetworkConfig,
  type NetworkSettings,
} from './network-config.js';
export {
  parseNetworkUpdate,
  parseSandboxNetwork,
  toE2bNetwork,
  type E2bNetworkView,
  type SandboxNetwork,
} from './sandbox-network.js';
export { DEFAULT_LOCK_WAIT_MS } from './prefix-lock.js';
export { NETNS_DIR } from './slot-addressing.js';
export {
  SlotManager,
  type AcquireOptions,
  type CloseOptions,
  type SlotManagerOptions,
  type SlotManagerStats,
} from './slot-manager.js';
export type { Slot, SlotRecord } from './slot.js';
