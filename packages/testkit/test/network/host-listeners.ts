/**
 * What a guest could aim at on the host: every TCP and UDP listening socket
 * of the host's root network namespace (`ss -Hlntup`, whatever address it
 * is bound to: a socket bound to loopback only is still listed, so its port
 * is tried on every other address too) and every IPv4 address of that
 * namespace except loopback (`ip -o -4 addr show`; guests have IPv4 only,
 * and from inside a guest 127.0.0.1 is the guest itself).
 *
 * The parsers are pure (tested in `host-listeners.test.ts`); the two
 * readers run the commands in the caller's namespace.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** One listening socket. */
export interface Listener {
  readonly proto: 'tcp' | 'udp';
  /** The bound address as `ss` prints it (`0.0.0.0`, `[::]`, `127.0.0.53%lo`, `*`). */
  readonly address: string;
  readonly port: number;
  /** The owning process(es), as `ss -p` names them; '' when not shown. */
  readonly process: string;
}

/** One IPv4 address of an interface. */
export interface HostAddress {
  readonly dev: string;
  readonly address: string;
}

/**
 * Parses `ss -Hlntup` output (netid, state, queues, local, peer, process).
 * Lines of other netids are ignored.
 */
export function parseSsListeners(text: string): Listener[] {
  const out: Listener[] = [];
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    const proto = cols[0];
    const local = cols[4];
    if ((proto !== 'tcp' && proto !== 'udp') || local === undefined) continue;
    const at = local.lastIndexOf(':');
    const port = Number(local.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port <= 0) continue;
    const users = cols.slice(6).join(' ');
    const names = [...users.matchAll(/\("([^"]+)"/g)].map((m) => m[1]);
    out.push({ proto, address: local.slice(0, at), port, process: names.join(',') });
  }
  return out;
}

/** Parses `ip -o -4 addr show`: every address but loopback ones (127/8). */
export function parseIpv4Addresses(text: string): HostAddress[] {
  const out: HostAddress[] = [];
  for (const line of text.split('\n')) {
    const m = /^\d+:\s+(\S+)\s+inet\s+(\d+\.\d+\.\d+\.\d+)\//.exec(line);
    if (m === null || m[2]?.startsWith('127.') === true) continue;
    out.push({ dev: (m[1] ?? '').replace(/@.*$/, ''), address: m[2] ?? '' });
  }
  return out;
}

/** The listening sockets of the caller's network namespace. */
export async function hostListeners(): Promise<Listener[]> {
  return parseSsListeners((await exec('ss', ['-Hlntup'])).stdout);
}

/** The non-loopback IPv4 addresses of the caller's network namespace. */
export async function hostIpv4Addresses(): Promise<HostAddress[]> {
  return parseIpv4Addresses((await exec('ip', ['-o', '-4', 'addr', 'show'])).stdout);
}
