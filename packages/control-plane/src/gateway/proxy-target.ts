/**
 * Which sandbox port a data-plane request is for: the `E2b-Sandbox-Id`
 * (+ `E2b-Sandbox-Port`) headers the SDKs send with `E2B_SANDBOX_URL`, or
 * a `{port}-{id}.{domain}` host. Headers win, and win over API paths (a
 * `/health` with `E2b-Sandbox-Id` is envd's). The node applies the same
 * rules when the request reaches it.
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

/** The target a request names, or undefined for a control-plane request. */
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
