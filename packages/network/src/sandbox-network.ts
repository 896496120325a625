/**
 * Validation of what E2B clients send about a sandbox's network, for the
 * node daemon's routes: `POST /sandboxes` (`network`, `allow_internet_access`)
 * and `PUT /sandboxes/{id}/network` (`allowOut`, `denyOut`, and, as an aenv
 * extension, `allow_internet_access`). These are pure functions: they turn
 * untrusted JSON into a {@link SandboxNetwork} or {@link EgressPolicy}, or
 * throw an `AenvError` (HTTP 400) whose message names the offending field.
 *
 * A PUT replaces the whole egress policy: absent fields take their defaults
 * (internet allowed, empty lists), as E2B's own endpoint does.
 *
 * @module
 */
import {
  formatEgressTarget,
  invalidField,
  parseEgressList,
  unsupportedField,
  type EgressPolicy,
  type EgressTarget,
} from './egress-policy.js';

/** The network settings of a sandbox, as asked for at create. */
export interface SandboxNetwork {
  /** Egress rules; enforced by the slot. */
  readonly egress: EgressPolicy;
  /**
   * Whether sandbox URLs work without the traffic access token (ingress, the
   * proxy's concern). Default `true`.
   */
  readonly allowPublicTraffic: boolean;
  /** The `Host` header the proxy sends to the guest instead of the real one, if set. */
  readonly maskRequestHost: string | undefined;
}

/** The E2B wire shape of a sandbox's network, for `GET /sandboxes/{id}`. */
export interface E2bNetworkView {
  readonly allowOut: string[];
  readonly denyOut: string[];
  readonly allowPublicTraffic: boolean;
  readonly maskRequestHost?: string;
}

const NETWORK_KEYS = new Set([
  'allowOut',
  'denyOut',
  'allowPublicTraffic',
  'maskRequestHost',
  'rules',
  'egressProxy',
  'httpsPorts',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalBoolean(value: unknown, field: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw invalidField(field, 'expected true or false');
  return value;
}

/** `allow_internet_access` as E2B spells it, or `allowInternetAccess` as aenv's SDK may. */
function readAllowInternet(body: Record<string, unknown>): boolean {
  const snake = body['allow_internet_access'];
  if (snake !== undefined && snake !== null) {
    return optionalBoolean(snake, 'allow_internet_access', true);
  }
  return optionalBoolean(body['allowInternetAccess'], 'allowInternetAccess', true);
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

function rejectUnimplemented(network: Record<string, unknown>, prefix: string): void {
  for (const key of ['rules', 'egressProxy', 'httpsPorts']) {
    if (!isEmpty(network[key])) {
      throw unsupportedField(`${prefix}${key}`, 'not supported by this node yet');
    }
  }
}

function egressOf(
  lists: Record<string, unknown>,
  allowInternetAccess: boolean,
  prefix: string,
): EgressPolicy {
  return {
    allowInternetAccess,
    allowOut: parseEgressList(lists['allowOut'], `${prefix}allowOut`),
    denyOut: parseEgressList(lists['denyOut'], `${prefix}denyOut`),
  };
}

/**
 * Validates the network part of a create request (`POST /sandboxes` or the
 * aenv cold-start route): `body.network` and `body.allow_internet_access`.
 * Other keys of `body` are ignored.
 * @throws {AenvError} `NET_POLICY_INVALID` or `NET_POLICY_UNSUPPORTED`, naming the field.
 */
export function parseSandboxNetwork(body: Readonly<Record<string, unknown>>): SandboxNetwork {
  const allowInternetAccess = readAllowInternet(body);
  const network = body['network'] ?? {};
  if (!isObject(network)) throw invalidField('network', 'expected an object');
  for (const key of Object.keys(network)) {
    if (!NETWORK_KEYS.has(key)) throw invalidField(`network.${key}`, 'unknown field');
  }
  rejectUnimplemented(network, 'network.');
  const mask = network['maskRequestHost'];
  if (mask !== undefined && mask !== null && typeof mask !== 'string') {
    throw invalidField('network.maskRequestHost', 'expected a string');
  }
  return {
    egress: egressOf(network, allowInternetAccess, 'network.'),
    allowPublicTraffic: optionalBoolean(
      network['allowPublicTraffic'],
      'network.allowPublicTraffic',
      true,
    ),
    maskRequestHost: typeof mask === 'string' && mask !== '' ? mask : undefined,
  };
}

/**
 * Validates the body of `PUT /sandboxes/{id}/network` into the policy that
 * replaces the running sandbox's one (`applyPolicy`).
 * @throws {AenvError} `NET_POLICY_INVALID` or `NET_POLICY_UNSUPPORTED`, naming the field.
 */
export function parseNetworkUpdate(body: unknown): EgressPolicy {
  const b = body ?? {};
  if (!isObject(b)) throw invalidField('body', 'expected a JSON object');
  const known = new Set(['allowOut', 'denyOut', 'allow_internet_access', 'allowInternetAccess']);
  for (const key of Object.keys(b)) {
    if (!known.has(key)) throw invalidField(key, 'unknown field');
  }
  return egressOf(b, readAllowInternet(b), '');
}

/** The E2B wire view of a sandbox's network settings. */
export function toE2bNetwork(network: SandboxNetwork): E2bNetworkView {
  const format = (list: readonly EgressTarget[]): string[] => list.map(formatEgressTarget);
  return {
    allowOut: format(network.egress.allowOut),
    denyOut: format(network.egress.denyOut),
    allowPublicTraffic: network.allowPublicTraffic,
    ...(network.maskRequestHost === undefined ? {} : { maskRequestHost: network.maskRequestHost }),
  };
}
