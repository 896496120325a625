/**
 * The ingress rule of private sandboxes (E2B's `allowPublicTraffic:
 * false`): a proxied request to any port of such a sandbox must carry its
 * traffic access token in `e2b-traffic-access-token`. envd's port is
 * exempt — envd demands its own access token, and the SDKs never send the
 * traffic token there. The check runs before the address lookup, so a
 * request without the token cannot wake a paused sandbox either.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AenvError } from '@aenv/shared';
import type { ProxyTarget } from '@aenv/shared';

/** envd's port inside every sandbox. */
const ENVD_PORT = 49983;

/** What the check needs of a sandbox: its token when it has one. */
export type TrafficTokenOf = (sandboxId: string) => string | undefined;

/**
 * Throws unless the request may reach `target`.
 * @throws {AenvError} `PROXY_TRAFFIC_TOKEN_INVALID`.
 */
export type TrafficAuthorizer = (target: ProxyTarget, headers: IncomingHttpHeaders) => void;

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The authorizer for sandboxes whose traffic token `tokenOf` reports. */
export function trafficAuthorizer(tokenOf: TrafficTokenOf): TrafficAuthorizer {
  return (target, headers) => {
    if (target.port === ENVD_PORT) return;
    const expected = tokenOf(target.sandboxId);
    if (expected === undefined) return;
    const raw = headers['e2b-traffic-access-token'];
    const given = Array.isArray(raw) ? raw[0] : raw;
    if (given === undefined || !sameSecret(given, expected)) {
      throw new AenvError(
        'PROXY_TRAFFIC_TOKEN_INVALID',
        `sandbox ${target.sandboxId} accepts no public traffic: send its trafficAccessToken as e2b-traffic-access-token`,
        { fields: { sandboxId: target.sandboxId } },
      );
    }
  };
}
