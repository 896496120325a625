/**
 * The egress policy of one sandbox, and the parsing of its rule entries.
 *
 * Semantics (E2B's): a packet the guest sends to a destination is accepted
 * when it matches an `allowOut` entry; otherwise rejected when it matches a
 * `denyOut` entry; otherwise accepted when `allowInternetAccess`, else
 * rejected. `allowOut` wins over `denyOut`. The node-wide always-denied
 * ranges (`docs/networking.md`) are checked before any of this, so no
 * policy can open them.
 *
 * An entry is an IPv4 address or CIDR, optionally with a port or port range
 * for TCP and UDP: `8.8.8.8`, `10.1.0.0/16`, `1.1.1.1:443`,
 * `8.8.8.0/24:53-443`. Domain names are recognised and refused with
 * `NET_POLICY_UNSUPPORTED` (a DNS-aware egress path is not built yet).
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import { formatCidr, parseCidr, type Cidr } from './ipv4.js';

/** An inclusive TCP/UDP destination port range. */
export interface PortRange {
  readonly first: number;
  readonly last: number;
}

/** One `allowOut`/`denyOut` entry: a network and, optionally, TCP/UDP ports. */
export interface EgressTarget {
  /** Canonical network, host bits cleared (`8.8.8.0/24`, `1.1.1.1/32`). */
  readonly cidr: string;
  /** When set, the entry matches only TCP and UDP to these ports. */
  readonly ports?: PortRange;
}

/** The egress rules of one sandbox. Plain, JSON-safe data. */
export interface EgressPolicy {
  /** The verdict for destinations no entry matches. */
  readonly allowInternetAccess: boolean;
  /** Entries that are allowed, whatever `denyOut` says. */
  readonly allowOut: readonly EgressTarget[];
  /** Entries that are rejected unless `allowOut` matches. */
  readonly denyOut: readonly EgressTarget[];
}

/** The policy of a sandbox that asked for nothing: internet allowed, no lists. */
export const DEFAULT_EGRESS_POLICY: EgressPolicy = Object.freeze({
  allowInternetAccess: true,
  allowOut: Object.freeze([]),
  denyOut: Object.freeze([]),
});

/** The policy of an idle pooled slot: nothing leaves. */
export const DENY_ALL_EGRESS_POLICY: EgressPolicy = Object.freeze({
  allowInternetAccess: false,
  allowOut: Object.freeze([]),
  denyOut: Object.freeze([]),
});

/** The most entries one list may hold. */
export const MAX_EGRESS_ENTRIES = 1000;

const HOSTNAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/i;
const PORTS = /^(\d{1,5})(?:-(\d{1,5}))?$/;

/** A `NET_POLICY_INVALID` error whose message starts with the request field. */
export function invalidField(field: string, message: string): AenvError {
  return new AenvError('NET_POLICY_INVALID', `${field}: ${message}`, { fields: { field } });
}

/** A `NET_POLICY_UNSUPPORTED` error whose message starts with the request field. */
export function unsupportedField(field: string, message: string): AenvError {
  return new AenvError('NET_POLICY_UNSUPPORTED', `${field}: ${message}`, { fields: { field } });
}

function parsePorts(text: string, field: string): PortRange {
  const m = PORTS.exec(text);
  const first = Number(m?.[1]);
  const last = m?.[2] === undefined ? first : Number(m[2]);
  if (m === null || first < 1 || last > 65535 || first > last) {
    throw invalidField(field, `'${text}' is not a port (1-65535) or port range (first-last)`);
  }
  return { first, last };
}

/**
 * Parses one `allowOut`/`denyOut` entry.
 * @param field the request field, for messages (`network.allowOut[2]`).
 * @throws {AenvError} `NET_POLICY_INVALID` for malformed entries,
 *   `NET_POLICY_UNSUPPORTED` for domain names and IPv6.
 */
export function parseEgressTarget(value: unknown, field: string): EgressTarget {
  if (typeof value !== 'string') throw invalidField(field, 'expected a string');
  if (value.includes('[') || (value.match(/:/g)?.length ?? 0) > 1) {
    throw unsupportedField(
      field,
      `IPv6 rules are not supported (guests have IPv4 only): '${value}'`,
    );
  }
  const colon = value.indexOf(':');
  const netText = colon === -1 ? value : value.slice(0, colon);
  const ports = colon === -1 ? undefined : parsePorts(value.slice(colon + 1), field);
  const cidr = parseCidr(netText);
  if (cidr !== undefined)
    return ports === undefined ? { cidr: formatCidr(cidr) } : { cidr: formatCidr(cidr), ports };
  if (HOSTNAME.test(netText) && !/^[\d.]+$/.test(netText)) {
    throw unsupportedField(
      field,
      `domain rules are not supported yet ('${value}'); use IPv4 addresses or CIDRs`,
    );
  }
  throw invalidField(
    field,
    `'${value}' is not an IPv4 address or CIDR (a.b.c.d[/n][:port[-port]])`,
  );
}

/**
 * Parses an `allowOut`/`denyOut` list; absent (`undefined`/`null`) is empty.
 * @throws {AenvError} as {@link parseEgressTarget}, and `NET_POLICY_INVALID` for a non-array.
 */
export function parseEgressList(value: unknown, field: string): EgressTarget[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidField(field, 'expected an array of strings');
  if (value.length > MAX_EGRESS_ENTRIES) {
    throw invalidField(
      field,
      `at most ${MAX_EGRESS_ENTRIES} entries are allowed, got ${value.length}`,
    );
  }
  const seen = new Set<string>();
  const out: EgressTarget[] = [];
  value.forEach((entry: unknown, i) => {
    const target = parseEgressTarget(entry, `${field}[${i}]`);
    const key = formatEgressTarget(target);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(target);
  });
  return out;
}

/** Formats an entry the way E2B clients write it: `1.1.1.1`, `8.8.8.0/24:53-443`. */
export function formatEgressTarget(target: EgressTarget): string {
  const net = target.cidr.endsWith('/32') ? target.cidr.slice(0, -3) : target.cidr;
  if (target.ports === undefined) return net;
  const { first, last } = target.ports;
  return first === last ? `${net}:${first}` : `${net}:${first}-${last}`;
}

/** The parsed network of an entry (entries are canonical, so this cannot fail). */
export function targetCidr(target: EgressTarget): Cidr {
  const cidr = parseCidr(target.cidr, true);
  if (cidr === undefined)
    throw new AenvError('INTERNAL', `non-canonical egress target ${target.cidr}`);
  return cidr;
}

function checkTarget(target: EgressTarget, field: string): EgressTarget {
  const cidr = parseCidr(target.cidr, true);
  if (cidr === undefined || !target.cidr.includes('/')) {
    throw invalidField(
      field,
      `'${String(target.cidr)}' is not a canonical CIDR (a.b.c.d/n, host bits zero)`,
    );
  }
  const p = target.ports;
  if (p !== undefined) {
    const ok = Number.isInteger(p.first) && Number.isInteger(p.last) && p.first >= 1;
    if (!ok || p.last > 65535 || p.first > p.last) throw invalidField(field, 'bad port range');
  }
  return target;
}

/**
 * Checks a policy built in code or read back from storage (policies from
 * the parse functions always pass).
 * @throws {AenvError} `NET_POLICY_INVALID`.
 */
export function checkEgressPolicy(policy: EgressPolicy): EgressPolicy {
  if (typeof policy.allowInternetAccess !== 'boolean') {
    throw invalidField('allowInternetAccess', 'expected true or false');
  }
  for (const key of ['allowOut', 'denyOut'] as const) {
    const list: unknown = policy[key];
    if (!Array.isArray(list)) throw invalidField(key, 'expected an array');
    if (list.length > MAX_EGRESS_ENTRIES)
      throw invalidField(key, `more than ${MAX_EGRESS_ENTRIES} entries`);
    (list as EgressTarget[]).forEach((t, i) => checkTarget(t, `${key}[${i}]`));
  }
  return policy;
}
