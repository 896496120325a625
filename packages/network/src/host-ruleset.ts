/**
 * The host-side nftables rules of a node, rendered as `nft -f` scripts.
 *
 * Everything lives in one table, `inet <prefix>_slots`, so a node touches
 * nothing else and removing the table removes every rule it ever made. Each
 * script this module renders is applied as one `nft -f` call, which the
 * kernel commits as one transaction: a packet sees either the old rules or
 * the new ones, never a half-applied mix, and a transaction that touches
 * slot 3's objects leaves every other slot's rules and traffic alone.
 *
 * Order of evaluation for a packet a slot sends (chain `egress`):
 * 1. IPv6 and spoofed sources (reverse-path check) are dropped;
 * 2. DNS to the node's resolver is accepted (it may sit in a private range);
 * 3. always-denied ranges are rejected: the address pool (other slots),
 *    0/8, loopback, link-local (metadata), multicast, reserved, operator extras;
 * 4. private ranges are rejected unless the operator allowed them;
 * 5. the slot's own chain `s<i>` (via the `slot_policy` verdict map, keyed by
 *    the veth the packet came in on): allowOut, then denyOut, then the base;
 *    an empty chain (a slot without a policy) falls through to a reject.
 * Packets to the host itself (chain `input`) are rejected unless they answer
 * a connection the host opened; new connections into slots (chain
 * `ingress`) are rejected, so only the host itself reaches a guest.
 *
 * Policy chains are evaluated for every packet, not only for new
 * connections: replacing a policy keeps established flows that are still
 * allowed and cuts those that no longer are.
 *
 * @module
 */
import { targetCidr, type EgressPolicy, type EgressTarget } from './egress-policy.js';
import { formatCidr, formatRange, mergeRanges, parseCidr, rangeOf, type Cidr } from './ipv4.js';
import type { SlotAddressing } from './slot-addressing.js';

/** Ranges no guest may reach, whatever the operator or the sandbox say. */
export const ALWAYS_DENIED_RANGES = [
  '0.0.0.0/8',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '224.0.0.0/4',
  '240.0.0.0/4',
] as const;

/** Private ranges, denied unless the operator lists them in `allowPrivateRanges`. */
export const PRIVATE_RANGES = [
  '10.0.0.0/8',
  '100.64.0.0/10',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '198.18.0.0/15',
] as const;

/**
 * Every denial jumps to chain `deny`: TCP gets a reset, anything else an
 * ICMP "administratively prohibited". Resets make a blocked connect fail at
 * once (ICMP errors are rate-limited per destination, so TCP would sit in
 * SYN retries) and cut a denied established flow at its next packet.
 */
const REJECT = 'goto deny';

/** The node-wide inputs of the host table. */
export interface HostRulesetInput {
  readonly addressing: SlotAddressing;
  readonly addressPool: Cidr;
  readonly allowPrivateRanges: readonly Cidr[];
  readonly deniedRanges: readonly Cidr[];
  /** The resolver guests' DNS is forwarded to, if any. */
  readonly dnsServer: string | undefined;
}

/** A slot whose rules a rendered table includes. */
export interface SlotRules {
  readonly index: number;
  readonly policy: EgressPolicy;
}

function elements(cidrs: readonly Cidr[]): string {
  const merged = mergeRanges(cidrs.map(rangeOf));
  return merged.length === 0 ? '' : ` elements = { ${merged.map(formatRange).join(', ')} };`;
}

function constantCidrs(list: readonly string[]): Cidr[] {
  return list.map((c) => parseCidr(c) as Cidr);
}

function egressChain(input: HostRulesetInput): string[] {
  const dns = input.dnsServer;
  return [
    '  chain egress {',
    '    meta nfproto ipv6 drop',
    '    fib saddr . iif oif missing drop',
    ...(dns === undefined
      ? []
      : [`    ip daddr ${dns} meta l4proto { tcp, udp } th dport 53 accept`]),
    `    ip daddr @always_denied ${REJECT}`,
    '    ip daddr @private_allowed iifname vmap @slot_policy',
    `    ip daddr @private ${REJECT}`,
    '    iifname vmap @slot_policy',
    `    ${REJECT}`,
    '  }',
  ];
}

/**
 * The whole table: replaces any existing one atomically (`table` + `delete
 * table` + definition in one transaction), with the rules of `slots`.
 */
export function renderHostTable(input: HostRulesetInput, slots: readonly SlotRules[]): string {
  const t = input.addressing.tableName;
  const glob = input.addressing.interfaceGlob;
  const denied = [...constantCidrs(ALWAYS_DENIED_RANGES), input.addressPool, ...input.deniedRanges];
  const body = [
    `table inet ${t} {`,
    `  set always_denied { type ipv4_addr; flags interval;${elements(denied)} }`,
    `  set private { type ipv4_addr; flags interval;${elements(constantCidrs(PRIVATE_RANGES))} }`,
    `  set private_allowed { type ipv4_addr; flags interval;${elements(input.allowPrivateRanges)} }`,
    '  map slot_policy { type ifname : verdict; }',
    '  chain forward {',
    '    type filter hook forward priority filter; policy accept;',
    `    iifname "${glob}" jump egress`,
    `    oifname "${glob}" jump ingress`,
    '  }',
    ...egressChain(input),
    '  chain deny {',
    '    meta l4proto tcp reject with tcp reset',
    '    reject with icmpx type admin-prohibited',
    '  }',
    `  chain ingress { ct state established,related accept; ${REJECT}; }`,
    '  chain input {',
    '    type filter hook input priority filter; policy accept;',
    `    iifname "${glob}" jump from_slot`,
    '  }',
    `  chain from_slot { ct state established,related accept; ${REJECT}; }`,
    '  chain postrouting {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    `    iifname "${glob}" oifname != "${glob}" masquerade`,
    '  }',
    '}',
  ];
  const perSlot = slots.flatMap((s) => [
    renderSlotAdd(input.addressing, s.index),
    renderSlotPolicy(input.addressing, s.index, s.policy, true),
  ]);
  return [`table inet ${t}`, `delete table inet ${t}`, ...body, ...perSlot].join('\n') + '\n';
}

/** Removes the node's table (and with it every rule of every slot). */
export function renderTableDelete(addressing: SlotAddressing): string {
  const t = addressing.tableName;
  return `table inet ${t}\ndelete table inet ${t}\n`;
}

function names(addressing: SlotAddressing, index: number) {
  const t = `inet ${addressing.tableName}`;
  return { t, chain: `s${index}`, allow: `a${index}`, deny: `d${index}` };
}

function portRule(target: EgressTarget, verdict: string): string {
  const ports = target.ports as { first: number; last: number };
  const range = ports.first === ports.last ? `${ports.first}` : `${ports.first}-${ports.last}`;
  const net = formatCidr(targetCidr(target));
  return `ip daddr ${net} meta l4proto { tcp, udp } th dport ${range} ${verdict}`;
}

function setElements(targets: readonly EgressTarget[]): string[] {
  const ranges = mergeRanges(
    targets.filter((x) => x.ports === undefined).map((x) => rangeOf(targetCidr(x))),
  );
  return ranges.map(formatRange);
}

function policyRules(addressing: SlotAddressing, index: number, policy: EgressPolicy): string[] {
  const n = names(addressing, index);
  const rule = (r: string): string => `add rule ${n.t} ${n.chain} ${r}`;
  return [
    rule(`ip daddr @${n.allow} accept`),
    ...policy.allowOut.filter((x) => x.ports !== undefined).map((x) => rule(portRule(x, 'accept'))),
    rule(`ip daddr @${n.deny} ${REJECT}`),
    ...policy.denyOut.filter((x) => x.ports !== undefined).map((x) => rule(portRule(x, REJECT))),
    rule(policy.allowInternetAccess ? 'accept' : REJECT),
  ];
}

function setFill(t: string, set: string, targets: readonly EgressTarget[]): string[] {
  const els = setElements(targets);
  return els.length === 0 ? [] : [`add element ${t} ${set} { ${els.join(', ')} }`];
}

/**
 * Adds a slot's (empty) sets and chain and its verdict-map entry. An empty
 * chain returns to `egress`, whose last rule rejects: a slot without a
 * policy lets nothing out.
 */
export function renderSlotAdd(addressing: SlotAddressing, index: number): string {
  const n = names(addressing, index);
  const ifname = addressing.hostInterface(index);
  return [
    `add set ${n.t} ${n.allow} { type ipv4_addr; flags interval; }`,
    `add set ${n.t} ${n.deny} { type ipv4_addr; flags interval; }`,
    `add chain ${n.t} ${n.chain}`,
    `add element ${n.t} slot_policy { "${ifname}" : jump ${n.chain} }`,
  ].join('\n');
}

/** Empties a slot's chain and sets: back to the state `renderSlotAdd` made (deny-all). */
export function renderSlotClear(addressing: SlotAddressing, index: number): string {
  const n = names(addressing, index);
  return [
    `flush chain ${n.t} ${n.chain}`,
    `flush set ${n.t} ${n.allow}`,
    `flush set ${n.t} ${n.deny}`,
  ].join('\n');
}

/**
 * Replaces a slot's policy in one transaction. When the slot is `pristine`
 * (its chain and sets are empty, as after `renderSlotAdd` or
 * `renderSlotClear`) the transaction only adds, which the kernel commits
 * without waiting for an RCU grace period; replacing a policy in force has
 * to delete the old rules and costs one such wait (about 10-20 ms).
 */
export function renderSlotPolicy(
  addressing: SlotAddressing,
  index: number,
  policy: EgressPolicy,
  pristine = false,
): string {
  const n = names(addressing, index);
  return (
    [
      ...(pristine ? [] : [renderSlotClear(addressing, index)]),
      ...setFill(n.t, n.allow, policy.allowOut),
      ...setFill(n.t, n.deny, policy.denyOut),
      ...policyRules(addressing, index, policy),
    ].join('\n') + '\n'
  );
}
/**
 * Removes a slot's rules. Idempotent: each object is first added (a no-op
 * when it exists) so that deleting it cannot fail on a half-built slot.
 */
export function renderSlotDelete(addressing: SlotAddressing, index: number): string {
  const n = names(addressing, index);
  const ifname = addressing.hostInterface(index);
  return [
    `add chain ${n.t} ${n.chain}`,
    `add set ${n.t} ${n.allow} { type ipv4_addr; flags interval; }`,
    `add set ${n.t} ${n.deny} { type ipv4_addr; flags interval; }`,
    `add element ${n.t} slot_policy { "${ifname}" : jump ${n.chain} }`,
    `delete element ${n.t} slot_policy { "${ifname}" }`,
    `flush chain ${n.t} ${n.chain}`,
    `delete chain ${n.t} ${n.chain}`,
    `delete set ${n.t} ${n.allow}`,
    `delete set ${n.t} ${n.deny}`,
  ].join('\n');
}
