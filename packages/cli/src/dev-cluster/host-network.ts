/**
 * The dev cluster's test network: a bridge on the host and one network
 * namespace per node, each joined to the bridge by a veth pair, with
 * private addresses the cluster assigns (`<subnet>.0.1` on the host,
 * `<subnet>.0.<10+i>` for node `i`). Nodes run inside their namespace as
 * separate hosts; the gateway (on the host) reaches them there, and they
 * reach Redis and S3 on the host's bridge address. Nothing is routed
 * beyond the bridge.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Names and addresses of the network. */
export interface DevNetwork {
  /** Short prefix of every name (≤ 7 characters: interface names are ≤ 15). */
  readonly prefix: string;
  /** First two octets of the bridge's /24, e.g. `10.242`. */
  readonly subnet: string;
  readonly nodes: number;
}

/** The bridge's name. */
export function bridgeName(n: DevNetwork): string {
  return `${n.prefix}br`;
}

/** Node `i`'s namespace (1-based). */
export function nodeNetns(n: DevNetwork, i: number): string {
  return `${n.prefix}n${i}`;
}

/** The host's address on the bridge. */
export function hostAddress(n: DevNetwork): string {
  return `${n.subnet}.0.1`;
}

/** Node `i`'s address. */
export function nodeAddress(n: DevNetwork, i: number): string {
  return `${n.subnet}.0.${10 + i}`;
}

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

/** Creates the bridge and every node's namespace (undo with {@link removeNetwork}). */
export async function createNetwork(n: DevNetwork): Promise<void> {
  const br = bridgeName(n);
  await ip('link', 'add', br, 'type', 'bridge');
  await ip('addr', 'add', `${hostAddress(n)}/24`, 'dev', br);
  await ip('link', 'set', br, 'up');
  for (let i = 1; i <= n.nodes; i++) {
    const ns = nodeNetns(n, i);
    const hostEnd = `${n.prefix}h${i}`;
    const nodeEnd = `${n.prefix}e${i}`;
    await ip('netns', 'add', ns);
    await ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nodeEnd);
    await ip('link', 'set', nodeEnd, 'netns', ns);
    await ip('link', 'set', hostEnd, 'master', br, 'up');
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
    await ip('-n', ns, 'link', 'set', nodeEnd, 'name', 'eth0');
    await ip('-n', ns, 'addr', 'add', `${nodeAddress(n, i)}/24`, 'dev', 'eth0');
    await ip('-n', ns, 'link', 'set', 'eth0', 'up');
  }
}

/** Cuts node `i`'s link to the bridge (its heartbeats stop reaching Redis over TCP; tests). */
export async function cutNodeLink(n: DevNetwork, i: number): Promise<void> {
  await ip('link', 'set', `${n.prefix}h${i}`, 'down');
}

/**
 * Removes the namespaces (with their veths), the bridge, and every
 * namespace whose name starts with one of `slotPrefixes` (nodes' network
 * slots a killed node left). Missing pieces are fine.
 */
export async function removeNetwork(n: DevNetwork, slotPrefixes: readonly string[]): Promise<void> {
  const { stdout } = await run('ip', ['netns', 'list']).catch(() => ({ stdout: '' }));
  const names = stdout
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((name) => name !== '');
  const ours = new Set(Array.from({ length: n.nodes }, (_, i) => nodeNetns(n, i + 1)));
  for (const name of names) {
    if (ours.has(name) || slotPrefixes.some((p) => name.startsWith(`${p}-`))) {
      await ip('netns', 'del', name).catch(() => undefined);
    }
  }
  for (let i = 1; i <= n.nodes; i++)
    await ip('link', 'del', `${n.prefix}h${i}`).catch(() => undefined);
  await ip('link', 'del', bridgeName(n)).catch(() => undefined);
}

/** What of the network is left on the host (tests: should be nothing after removal). */
export async function networkLeftovers(
  n: DevNetwork,
  slotPrefixes: readonly string[],
): Promise<string[]> {
  const netns = (await run('ip', ['netns', 'list']).catch(() => ({ stdout: '' }))).stdout;
  const links = (await run('ip', ['-o', 'link', 'show']).catch(() => ({ stdout: '' }))).stdout;
  const left: string[] = [];
  for (const line of netns.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    if (name.startsWith(n.prefix) || slotPrefixes.some((p) => name.startsWith(`${p}-`)))
      left.push(`netns ${name}`);
  }
  for (const line of links.split('\n')) {
    const name = /^\d+: ([^:@]+)/.exec(line)?.[1];
    if (name !== undefined && name.startsWith(n.prefix)) left.push(`link ${name}`);
  }
  return left;
}
