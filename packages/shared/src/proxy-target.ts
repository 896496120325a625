/**
 * Which sandbox port a request is for. Data-plane requests name it either
 * by headers (`E2b-Sandbox-Id` + `E2b-Sandbox-Port`, what the SDKs send with
 * `E2B_SANDBOX_URL`) or by host (`{port}-{sandboxId}.{domain}`). Headers win,
 * and win over API paths: `/health` with `E2b-Sandbox-Id` is envd's. The
 * node and the gateway route by this one rule.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';

/** A sandbox port named by a request. */
export interface ProxyTarget {
  readonly sandboxId: string;
  readonly port: number;
}

const HOST_PATTERN = /^(\d{1,5})-([a-z0-9]+)\.([^:]+)(?::\d+)?$/i;

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function validPort(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/**
 * The target a request names, or `undefined` when it is a control-plane
 * request. `domain` (when set) must match the host's domain part.
 */
export function proxyTargetOf(
  headers: IncomingHttpHeaders,
  domain: string | null,
): ProxyTarget | undefined {
  const id = first(headers['e2b-sandbox-id']);
  if (id !== undefined && id !== '') {
    return { sandboxId: id, port: validPort(first(headers['e2b-sandbox-port'])) ?? 49983 };
  }
  const host = first(headers.host);
  const m = host === undefined ? null : HOST_PATTERN.exec(host);
  if (m === null) return undefined;
  const [, portText, sandboxId, hostDomain] = m as unknown as [string, string, string, string];
  if (domain !== null && hostDomain.toLowerCase() !== domain.toLowerCase()) return undefined;
  const port = validPort(portText);
  return port === undefined ? undefined : { sandboxId: sandboxId.toLowerCase(), port };
}
