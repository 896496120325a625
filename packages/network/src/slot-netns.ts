/**
 * What runs inside a slot's network namespace, rendered as `sh` scripts that
 * the manager feeds to `nsenter --net=<slot netns> sh -s` (one process per
 * slot and step, instead of one per command).
 *
 * Inside every slot netns: `veth0` holds the slot address (`.2` of its /30)
 * with a default route to the host end (`.1`); `tap0` holds the guest's
 * gateway address and MAC; a small static nftables table translates between
 * the guest's fixed address and the slot address:
 * - DNAT: everything new arriving from the host on `veth0` goes to the guest;
 * - SNAT: everything the guest sends out `veth0` leaves as the slot address;
 * - DNS: the guest's queries to its gateway go to the node's resolver;
 * - the netns itself accepts nothing from the guest but ping, and forwards
 *   only from the guest's own address (no spoofing).
 * The rules are identical in every slot (they name interfaces, not slot
 * addresses), so they never change after the slot is built. Egress policy is
 * not here: it is enforced on the host side (`host-ruleset.ts`).
 *
 * @module
 */
import {
  GATEWAY_MAC,
  GUEST_GATEWAY,
  GUEST_IP,
  GUEST_PREFIX_LENGTH,
  SLOT_VETH_NAME,
  TAP_NAME,
} from './guest-network.js';
import type { SlotAddresses } from './slot-addressing.js';

/** The nftables table inside every slot netns. */
export const SLOT_NETNS_TABLE = 'aenv_slot';

const SYSCTLS = [
  'echo 1 > /proc/sys/net/ipv4/ip_forward',
  'if [ -d /proc/sys/net/ipv6 ]; then',
  '  echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6',
  '  echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6',
  'fi',
];

function tapLines(): string[] {
  return [
    `tuntap add dev ${TAP_NAME} mode tap`,
    `link set ${TAP_NAME} address ${GATEWAY_MAC}`,
    `addr add ${GUEST_GATEWAY}/${GUEST_PREFIX_LENGTH} dev ${TAP_NAME}`,
    `link set ${TAP_NAME} up`,
  ];
}

function vethLines(addresses: SlotAddresses): string[] {
  return [
    'link set lo up',
    `addr replace ${addresses.slotIp}/30 dev ${SLOT_VETH_NAME}`,
    `link set ${SLOT_VETH_NAME} up`,
    `route replace default via ${addresses.hostIp} dev ${SLOT_VETH_NAME}`,
  ];
}

/** The slot netns's nftables rules, replacing any earlier version atomically. */
export function renderSlotNetnsRules(dnsServer: string | undefined): string {
  const t = SLOT_NETNS_TABLE;
  const dns =
    dnsServer === undefined
      ? []
      : [
          `    ip saddr ${GUEST_IP} ip daddr ${GUEST_GATEWAY} meta l4proto { tcp, udp } th dport 53 dnat to ${dnsServer}`,
        ];
  return [
    `table ip ${t}`,
    `delete table ip ${t}`,
    `table ip ${t} {`,
    '  chain prerouting {',
    '    type nat hook prerouting priority dstnat; policy accept;',
    `    iifname "${SLOT_VETH_NAME}" dnat to ${GUEST_IP}`,
    ...dns,
    '  }',
    '  chain postrouting {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    `    oifname "${SLOT_VETH_NAME}" masquerade`,
    '  }',
    '  chain forward {',
    '    type filter hook forward priority filter; policy drop;',
    '    ct state established,related accept',
    `    iifname "${TAP_NAME}" oifname "${SLOT_VETH_NAME}" ip saddr ${GUEST_IP} accept`,
    `    iifname "${SLOT_VETH_NAME}" oifname "${TAP_NAME}" ct status dnat accept`,
    '  }',
    '  chain input {',
    '    type filter hook input priority filter; policy drop;',
    '    iif "lo" accept',
    '    ct state established,related accept',
    `    iifname "${TAP_NAME}" icmp type echo-request accept`,
    `    iifname "${TAP_NAME}" meta l4proto tcp reject with tcp reset`,
    `    iifname "${TAP_NAME}" reject`,
    '  }',
    '}',
  ].join('\n');
}

function heredoc(command: string, tag: string, lines: readonly string[]): string[] {
  return [`${command} <<'${tag}'`, ...lines, tag];
}

/** Sets up a fresh slot netns whose `veth0` the host side already created. */
export function renderSlotNetnsSetup(
  addresses: SlotAddresses,
  dnsServer: string | undefined,
): string {
  return [
    'set -e',
    ...SYSCTLS,
    ...heredoc('ip -batch -', 'AENV_IP', [...vethLines(addresses), ...tapLines()]),
    ...heredoc('nft -f -', 'AENV_NFT', [renderSlotNetnsRules(dnsServer)]),
    '',
  ].join('\n');
}

/**
 * Scrubs a released slot for reuse: a fresh tap (nothing of the previous
 * VM's device state survives), an empty neighbour cache and conntrack table.
 */
export function renderSlotNetnsScrub(): string {
  return [
    `ip link del ${TAP_NAME} 2>/dev/null || true`,
    'set -e',
    ...heredoc('ip -batch -', 'AENV_IP', [...tapLines(), 'neigh flush all']),
    'conntrack -F >/dev/null 2>&1',
    '',
  ].join('\n');
}

/**
 * Re-checks a slot adopted from a previous run: addresses, routes and rules
 * are re-applied idempotently; a missing tap fails the script (the slot's VM
 * cannot be attached any more, so the slot is lost).
 */
export function renderSlotNetnsEnsure(
  addresses: SlotAddresses,
  dnsServer: string | undefined,
): string {
  return [
    'set -e',
    `ip link show ${TAP_NAME} >/dev/null`,
    ...SYSCTLS,
    ...heredoc('ip -batch -', 'AENV_IP', vethLines(addresses)),
    ...heredoc('nft -f -', 'AENV_NFT', [renderSlotNetnsRules(dnsServer)]),
    '',
  ].join('\n');
}
