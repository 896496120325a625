/**
 * IPv4 address and CIDR arithmetic, on plain numbers.
 *
 * Addresses are unsigned 32-bit integers; a {@link Cidr} is a canonical
 * network (host bits cleared). Parsing is strict: four decimal octets without
 * leading zeros (so `010.0.0.1` is never read as octal by one tool and
 * decimal by another), prefix lengths 0–32. Functions return `undefined` on
 * malformed input and leave the error wording to their callers, which know
 * which field was wrong.
 *
 * @module
 */

/** An IPv4 network: first address and prefix length, host bits cleared. */
export interface Cidr {
  /** The network address as an unsigned 32-bit integer. */
  readonly base: number;
  /** The prefix length, 0–32. */
  readonly prefix: number;
}

/** An inclusive range of addresses, `first <= last`. */
export interface AddressRange {
  readonly first: number;
  readonly last: number;
}

const OCTET = /^(0|[1-9]\d{0,2})$/;

/** Parses a dotted-quad IPv4 address; `undefined` when malformed. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!OCTET.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** Formats an unsigned 32-bit integer as a dotted quad. */
export function formatIpv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

/** The netmask of a prefix length as an unsigned 32-bit integer. */
export function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/**
 * Parses `a.b.c.d/n` or a bare address (a /32).
 * @param strict when true, set host bits make the input invalid; otherwise they are cleared.
 */
export function parseCidr(text: string, strict = false): Cidr | undefined {
  const slash = text.indexOf('/');
  const addrText = slash === -1 ? text : text.slice(0, slash);
  const prefixText = slash === -1 ? '32' : text.slice(slash + 1);
  if (!/^(0|[1-9]\d?)$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  const addr = parseIpv4(addrText);
  if (addr === undefined || prefix > 32) return undefined;
  const base = (addr & maskOf(prefix)) >>> 0;
  if (strict && base !== addr) return undefined;
  return { base, prefix };
}

/** Formats a CIDR as `a.b.c.d/n`. */
export function formatCidr(cidr: Cidr): string {
  return `${formatIpv4(cidr.base)}/${cidr.prefix}`;
}

/** The addresses a CIDR covers. */
export function rangeOf(cidr: Cidr): AddressRange {
  const size = 2 ** (32 - cidr.prefix);
  return { first: cidr.base, last: cidr.base + size - 1 };
}

/** Whether two CIDRs share at least one address. */
export function overlaps(a: Cidr, b: Cidr): boolean {
  const ra = rangeOf(a);
  const rb = rangeOf(b);
  return ra.first <= rb.last && rb.first <= ra.last;
}

/** Whether `inner` lies entirely within `outer`. */
export function contains(outer: Cidr, inner: Cidr): boolean {
  const ro = rangeOf(outer);
  const ri = rangeOf(inner);
  return ro.first <= ri.first && ri.last <= ro.last;
}

/**
 * Sorts ranges and merges overlapping or adjacent ones, so the result can be
 * loaded into an nftables interval set (which rejects overlapping elements).
 */
export function mergeRanges(ranges: readonly AddressRange[]): AddressRange[] {
  const sorted = [...ranges].sort((a, b) => a.first - b.first || a.last - b.last);
  const merged: AddressRange[] = [];
  for (const r of sorted) {
    const top = merged[merged.length - 1];
    if (top !== undefined && r.first <= top.last + 1) {
      merged[merged.length - 1] = { first: top.first, last: Math.max(top.last, r.last) };
    } else {
      merged.push(r);
    }
  }
  return merged;
}

/** Formats a range as nftables writes set elements: `a.b.c.d` or `a.b.c.d-e.f.g.h`. */
export function formatRange(range: AddressRange): string {
  if (range.first === range.last) return formatIpv4(range.first);
  return `${formatIpv4(range.first)}-${formatIpv4(range.last)}`;
}
