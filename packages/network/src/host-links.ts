/**
 * Host-side kernel objects of slots, rendered as `ip -batch` input and `sh`
 * scripts: one `ip` process creates or removes the namespaces and veth pairs
 * of a whole batch of slots, which is what keeps building hundreds of slots
 * in the seconds range rather than minutes.
 *
 * @module
 */
import { SLOT_VETH_NAME } from './guest-network.js';
import { formatCidr, type Cidr } from './ipv4.js';
import type { SlotAddressing } from './slot-addressing.js';

/**
 * Creates each slot's netns and veth pair (host end up, with the slot's
 * gateway address; slot end moved into the netns as `veth0`).
 */
export function renderHostBuild(addressing: SlotAddressing, indices: readonly number[]): string {
  const lines: string[] = [];
  for (const i of indices) {
    const ns = addressing.netnsName(i);
    const host = addressing.hostInterface(i);
    lines.push(
      `netns add ${ns}`,
      `link add ${host} type veth peer name ${SLOT_VETH_NAME} netns ${ns}`,
      `link set ${host} up`,
      `addr add ${addressing.addresses(i).hostIp}/30 dev ${host}`,
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * Removes each slot's netns. The kernel then tears the namespaces down in
 * the background, in one batch, deleting each `veth0` and with it the host
 * end; that is some 15 times cheaper than deleting the veths one by one
 * (each synchronous delete waits for an RCU grace period). Run with
 * `ip -force` (a line that fails does not stop the batch).
 */
export function renderNetnsDestroy(addressing: SlotAddressing, indices: readonly number[]): string {
  return indices.map((i) => `netns del ${addressing.netnsName(i)}`).join('\n') + '\n';
}

/** Deletes host-side veths directly (for those a namespace teardown did not take along). */
export function renderLinkDestroy(addressing: SlotAddressing, indices: readonly number[]): string {
  return indices.map((i) => `link del ${addressing.hostInterface(i)}`).join('\n') + '\n';
}

/**
 * Deletes host conntrack entries from or to the given networks. `conntrack
 * -D` exits 1 when it deleted nothing; that is success here, anything else
 * fails the script.
 */
export function renderConntrackScrub(networks: readonly Cidr[]): string {
  const lines = [
    'ct() {',
    '  out=$(conntrack "$@" 2>&1) && return 0',
    '  case "$out" in *"0 flow entries"*) return 0 ;; esac',
    '  echo "$out" >&2',
    '  return 1',
    '}',
    'set -e',
  ];
  for (const net of networks) {
    const n = formatCidr(net);
    lines.push(`ct -D -s ${n}`, `ct -D -d ${n}`);
  }
  return lines.join('\n') + '\n';
}
