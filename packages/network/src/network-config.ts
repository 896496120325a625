/**
 * The `network` configuration section: its schema (composed into the node
 * daemon's config) and the semantic checks that turn a loaded section into
 * {@link NetworkSettings}. The schema checks types; `resolveNetworkSettings`
 * checks what types cannot express (a valid prefix, an aligned pool that does
 * not overlap the guest link, watermarks within capacity).
 *
 * @module
 */
import { AenvError, field, type ConfigSchema, type ResolvedConfig } from '@aenv/shared';
import { GUEST_LINK_CIDR } from './guest-network.js';
import { formatCidr, overlaps, parseCidr, parseIpv4, type Cidr } from './ipv4.js';

/** The schema of the `network` section. */
export const networkConfigSchema = {
  prefix: field.string({
    default: 'aenv',
    env: 'AENV_NETWORK_PREFIX',
    doc: 'Node-specific prefix of every netns, interface and nft table this node creates (1-8 of [a-z0-9], starting with a letter); reclaim touches only this prefix.',
  }),
  addressPool: field.string({
    default: '10.200.0.0/16',
    env: 'AENV_NETWORK_ADDRESS_POOL',
    doc: 'IPv4 range the host-side slot addresses come from, one /30 per slot (a /16 to /29, aligned).',
  }),
  maxSlots: field.integer({
    default: 0,
    min: 0,
    max: 16384,
    env: 'AENV_NETWORK_MAX_SLOTS',
    doc: 'Most slots that may exist at once; 0 means as many as the address pool holds.',
  }),
  slotPool: {
    low: field.integer({
      default: 4,
      min: 0,
      max: 16384,
      env: 'AENV_NETWORK_POOL_LOW',
      doc: 'When fewer pre-built slots than this are ready, the pool refills in the background.',
    }),
    high: field.integer({
      default: 16,
      min: 0,
      max: 16384,
      env: 'AENV_NETWORK_POOL_HIGH',
      doc: 'The pool refills up to this many ready slots; released slots beyond it are destroyed.',
    }),
  },
  allowPrivateRanges: field.list({
    default: [],
    env: 'AENV_NETWORK_ALLOW_PRIVATE_RANGES',
    doc: 'Private CIDRs (RFC 1918, CGNAT) that sandbox policies may open; all others stay denied to every guest.',
  }),
  deniedRanges: field.list({
    default: [],
    env: 'AENV_NETWORK_DENIED_RANGES',
    doc: 'Extra CIDRs no guest may ever reach (e.g. the operator network), checked before any policy.',
  }),
  lockDir: field.path({
    default: '/run/aenv/network',
    env: 'AENV_NETWORK_LOCK_DIR',
    doc: 'Directory of the per-prefix lock that keeps a restarted node from reclaiming while commands of its killed predecessor still run.',
  }),
  dnsServer: field.string({
    default: 'auto',
    env: 'AENV_NETWORK_DNS_SERVER',
    doc: "Resolver the guests' DNS traffic is forwarded to: an IPv4 address, 'auto' (from /etc/resolv.conf) or 'none'.",
  }),
} as const satisfies ConfigSchema;

/** The loaded `network` section. */
export type NetworkConfig = ResolvedConfig<typeof networkConfigSchema>;

/** The `network` section after semantic checks. */
export interface NetworkSettings {
  readonly prefix: string;
  readonly addressPool: Cidr;
  /** How many slots may exist at once (pool size and `maxSlots`). */
  readonly capacity: number;
  readonly poolLow: number;
  readonly poolHigh: number;
  readonly allowPrivateRanges: readonly Cidr[];
  readonly deniedRanges: readonly Cidr[];
  /** `auto`, `none`, or an IPv4 address. */
  readonly dnsServer: string;
  readonly lockDir: string;
}

const PREFIX = /^[a-z][a-z0-9]{0,7}$/;

function bad(key: string, message: string): AenvError {
  return new AenvError('CONFIG_INVALID_VALUE', `config key 'network.${key}': ${message}`, {
    fields: { key: `network.${key}` },
  });
}

function cidrList(values: readonly string[], key: string): Cidr[] {
  return values.map((text) => {
    const cidr = parseCidr(text);
    if (cidr === undefined) throw bad(key, `'${text}' is not an IPv4 address or CIDR`);
    return cidr;
  });
}

function resolvePool(text: string): Cidr {
  const pool = parseCidr(text, true);
  if (pool === undefined || !text.includes('/')) {
    throw bad('addressPool', `'${text}' is not an aligned IPv4 CIDR (host bits must be zero)`);
  }
  if (pool.prefix < 16 || pool.prefix > 29) {
    throw bad(
      'addressPool',
      `prefix length must be 16-29 (at most 16384 slots), got /${pool.prefix}`,
    );
  }
  const reserved = ['0.0.0.0/8', '127.0.0.0/8', '169.254.0.0/16', '224.0.0.0/3', GUEST_LINK_CIDR];
  for (const r of reserved) {
    if (overlaps(pool, parseCidr(r) as Cidr)) {
      throw bad('addressPool', `${formatCidr(pool)} overlaps the reserved range ${r}`);
    }
  }
  return pool;
}

function resolveDns(text: string, pool: Cidr): string {
  if (text === 'auto' || text === 'none') return text;
  const ip = parseIpv4(text);
  if (ip === undefined)
    throw bad('dnsServer', `expected an IPv4 address, 'auto' or 'none', got '${text}'`);
  const cidr = { base: ip, prefix: 32 };
  if (overlaps(cidr, pool) || overlaps(cidr, parseCidr('127.0.0.0/8') as Cidr)) {
    throw bad('dnsServer', `${text} is not reachable from guests (loopback or the slot pool)`);
  }
  return text;
}

/**
 * Checks a loaded `network` section.
 * @throws {AenvError} `CONFIG_INVALID_VALUE` naming the key.
 */
export function resolveNetworkSettings(config: NetworkConfig): NetworkSettings {
  if (!PREFIX.test(config.prefix)) {
    throw bad('prefix', `'${config.prefix}' must be 1-8 of [a-z0-9] starting with a letter`);
  }
  const addressPool = resolvePool(config.addressPool);
  const poolSlots = 2 ** (30 - addressPool.prefix);
  const capacity = config.maxSlots === 0 ? poolSlots : Math.min(poolSlots, config.maxSlots);
  const { low, high } = config.slotPool;
  if (low > high) throw bad('slotPool.low', `low (${low}) must not exceed high (${high})`);
  if (high > capacity) throw bad('slotPool.high', `high (${high}) exceeds capacity (${capacity})`);
  return {
    prefix: config.prefix,
    addressPool,
    capacity,
    poolLow: low,
    poolHigh: high,
    allowPrivateRanges: cidrList(config.allowPrivateRanges, 'allowPrivateRanges'),
    deniedRanges: cidrList(config.deniedRanges, 'deniedRanges'),
    dnsServer: resolveDns(config.dnsServer, addressPool),
    lockDir: config.lockDir,
  };
}

/**
 * The nameservers of a resolv.conf text, IPv4 and not loopback (a loopback
 * resolver such as systemd-resolved's 127.0.0.53 is unreachable from a slot).
 */
export function usableNameservers(resolvConf: string): string[] {
  const out: string[] = [];
  for (const line of resolvConf.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    const ip = m?.[1];
    if (ip === undefined || parseIpv4(ip) === undefined || ip.startsWith('127.')) continue;
    out.push(ip);
  }
  return out;
}
