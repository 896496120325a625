/**
 * The host's whole listening surface, attacked from inside a REAL guest
 * (issue #14, "guest → host" and "guest → guest"): a real node (`aenv
 * server`, `node-daemon.ts`) runs in the host's root network namespace and
 * creates two sandboxes, A and B. The test then
 *
 * 1. opens canaries on the host: a TCP and a UDP echo listener on 0.0.0.0,
 *    and a TCP listener on each slot gateway address (the host end of every
 *    veth of this node), and a TCP listener inside guest B;
 * 2. ENUMERATES every TCP and UDP listener of the root namespace (`ss`: the
 *    node's own API/proxy port, sshd, whatever else runs, the canaries) and
 *    every non-loopback IPv4 address of it (`host-listeners.ts`);
 * 3. from inside guest A (`guest-prober.ts`, the guest's own kernel) tries
 *    every listener's port on every such address, on the guest's gateway
 *    169.254.100.1, and on every slot address of the node (B's envd port
 *    49983 and its listener, the idle slots, A's own), TCP and UDP;
 * 4. asserts that every attempt fails. Intended exceptions: none here. The
 *    design's one intended path, DNS to the guest's gateway, is forwarded
 *    to `network.dnsServer` (never to a host listener); this node runs with
 *    `dnsServer: none` so nothing leaves the host, and port 53 on the
 *    gateway must then fail like everything else (the DNS path itself is
 *    proven by `reachability.vm.test.ts` against its "world" namespace).
 *
 * Positive controls, so a failure cannot come from a broken probe: the host
 * reaches every canary and B's listener; A reaches its own envd at
 * 127.0.0.1:49983 with the same prober in the same run. Traffic goes only
 * to this host's own addresses and to the node's slot namespaces. At the
 * end nothing may be left: no QEMU of this node, namespace, link or nft
 * table of its prefix.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ENVD_PORT } from '@aenv/guest';
import { GUEST_GATEWAY } from '@aenv/network';
import { Cleanup } from '@aenv/shared';
import { TEST_CACHE } from '../../src/index.js';
import { probeFromGuest, startGuestListener, type ProbeResult } from './guest-prober.js';
import { hostIpv4Addresses, hostListeners, type Listener } from './host-listeners.js';
import { Canaries, readGreeting } from './host-canaries.js';
import { NodeDaemon } from './node-daemon.js';

const exec = promisify(execFile);
const PREFIX = 'hsurf';
const POOL = '10.203.0.0/24';
/** The port guest B listens on (besides envd). */
const GUEST_PORT = 7777;

async function skipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, nftables, QEMU)';
  if (!NodeDaemon.available()) return 'needs the built command line (npm run build)';
  for (const [tool, args] of [
    ['qemu-system-x86_64', ['--version']],
    ['ss', ['-V']],
    ['nft', ['--version']],
  ] as const) {
    try {
      await exec(tool, args);
    } catch {
      return `needs ${tool} (scripts/apt-packages.txt)`;
    }
  }
  return undefined;
}

/** This node's slots as the host sees them: `<prefix>-v<i>` gateways and the slot addresses (+1). */
function nodeSlots(addresses: readonly { dev: string; address: string }[]): {
  gateways: string[];
  slotIps: string[];
} {
  const gateways = addresses.filter((a) => a.dev.startsWith(`${PREFIX}-v`)).map((a) => a.address);
  const plusOne = (ip: string): string => ip.replace(/\d+$/, (d) => String(Number(d) + 1));
  return { gateways, slotIps: gateways.map(plusOne) };
}

/** QEMU processes, namespaces, links and nft tables this node could leave behind. */
async function leftovers(home: string): Promise<string[]> {
  const out: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes('qemu-system') && cmd.includes(home)) out.push(`qemu pid ${pid}`);
  }
  const sh = async (cmd: string, args: string[]): Promise<string[]> =>
    (await exec(cmd, args)).stdout.split('\n').filter((l) => l.includes(PREFIX));
  out.push(...(await sh('ip', ['netns', 'list'])));
  out.push(...(await sh('ip', ['-o', 'link', 'show'])));
  out.push(...(await sh('nft', ['list', 'tables'])));
  return out;
}

/** "tcp 192.0.2.2:22 refused"-like lines of results grouped by outcome, for the log. */
function histogram(results: readonly ProbeResult[]): Record<string, number> {
  const h: Record<string, number> = {};
  for (const r of results) h[`${r.proto} ${r.outcome}`] = (h[`${r.proto} ${r.outcome}`] ?? 0) + 1;
  return h;
}

describe('guest → host surface and guest → guest, real node', { timeout: 600_000 }, () => {
  const cleanup = new Cleanup();
  let skip: string | undefined;
  let home = '';
  let node: NodeDaemon;
  let canaries: Canaries;
  let listeners: Listener[] = [];
  let slots = { gateways: [] as string[], slotIps: [] as string[] };
  let bSlotIp = '';
  /** Addresses that stay for the whole run: not another node's slot gateways (they come and go). */
  let stableHosts = new Set<string>();
  let results: ProbeResult[] = [];

  before(async () => {
    skip = await skipReason();
    if (skip !== undefined) return;
    const t0 = performance.now();
    const work = await mkdtemp(join(tmpdir(), 'aenv-host-surface-'));
    cleanup.add('remove work dir', () => rm(work, { recursive: true, force: true }));
    home = join(work, 'node');
    await mkdir(home);
    node = await NodeDaemon.start({
      home,
      env: {
        AENV_ARTIFACTS_DIR: TEST_CACHE,
        AENV_NETWORK_PREFIX: PREFIX,
        AENV_NETWORK_ADDRESS_POOL: POOL,
        AENV_NETWORK_LOCK_DIR: join(work, 'lock'),
        AENV_NETWORK_DNS_SERVER: 'none',
        AENV_NETWORK_POOL_LOW: '1',
        AENV_NETWORK_POOL_HIGH: '2',
        AENV_POOL_LOW: '0',
        AENV_POOL_HIGH: '0',
        AENV_LOG_LEVEL: 'warn',
        AENV_PAUSE_ON_SHUTDOWN: 'false',
        AENV_RESUME_ON_START: 'false',
      },
    });
    cleanup.add('stop the node', () => node.stop());
    const [a, b] = await Promise.all([node.create(), node.create()]);
    await startGuestListener(node, b, GUEST_PORT);
    slots = nodeSlots(await hostIpv4Addresses());
    canaries = await Canaries.open(slots.gateways);
    cleanup.add('close canaries', () => canaries.close());
    // Enumerated after the canaries opened: they must be among what is found.
    listeners = await hostListeners();
    const all = await hostIpv4Addresses();
    const addresses = all.map((x) => x.address);
    stableHosts = new Set([
      ...slots.gateways,
      ...all.filter((x) => !/-v\d+$/.test(x.dev)).map((x) => x.address),
    ]);
    const greeted = await Promise.all(slots.slotIps.map((ip) => readGreeting(ip, GUEST_PORT)));
    bSlotIp = slots.slotIps.find((_, i) => greeted[i] === 'guest\n') ?? '';
    const tcpPorts = new Set(listeners.filter((l) => l.proto === 'tcp').map((l) => l.port));
    const udpPorts = new Set(listeners.filter((l) => l.proto === 'udp').map((l) => l.port));
    const hosts = [GUEST_GATEWAY, ...addresses];
    const tProbe = performance.now();
    results = await probeFromGuest(node, a, {
      tcp: { hosts, ports: [...tcpPorts, 53] },
      udp: { hosts, ports: [...udpPorts, 53] },
      extra: [
        { proto: 'tcp', host: '127.0.0.1', port: ENVD_PORT },
        ...slots.slotIps.flatMap((host) => [
          { proto: 'tcp' as const, host, port: ENVD_PORT },
          { proto: 'tcp' as const, host, port: GUEST_PORT },
        ]),
      ],
    });
    console.log(
      `${listeners.length} listeners (${tcpPorts.size} TCP, ${udpPorts.size} UDP ports) x ` +
        `${hosts.length} addresses + ${slots.slotIps.length} slot addresses: ` +
        `${results.length} attempts from the guest in ${Math.round(performance.now() - tProbe)} ms; ` +
        `set-up ${Math.round(tProbe - t0)} ms`,
    );
    console.log(`outcomes: ${JSON.stringify(histogram(results))}`);
    for (const l of listeners)
      console.log(`  listener ${l.proto} ${l.address}:${l.port} ${l.process}`);
  });

  after(async () => {
    await cleanup.run();
    if (skip === undefined && home !== '') {
      assert.deepEqual(await leftovers(home), [], 'the node left something behind');
    }
  });

  it('positive controls: the host reaches every canary and guest B; A reaches its own envd', async (t) => {
    if (skip !== undefined) return t.skip(skip);
    assert.ok(
      slots.gateways.length >= 2,
      `slot gateways of ${PREFIX}: ${slots.gateways.join(', ')}`,
    );
    assert.notEqual(bSlotIp, '', 'guest B answers the host at its slot address');
    await canaries.assertReachableFromHost();
    const found = (proto: string, port: number): boolean =>
      listeners.some((l) => l.proto === proto && l.port === port);
    for (const port of canaries.tcpPorts()) assert.ok(found('tcp', port), `canary tcp ${port}`);
    const apiPort = Number(new URL(node.url).port);
    assert.ok(found('tcp', apiPort), `the node's own API/proxy port ${apiPort} is enumerated`);
    assert.ok(results.some((r) => r.port === apiPort && r.host === GUEST_GATEWAY));
    assert.ok(found('udp', canaries.udpPort()), 'the UDP canary is enumerated');
    const control = results.find((r) => r.host === '127.0.0.1');
    assert.equal(control?.outcome, 'ok', `A -> its own envd: ${JSON.stringify(control)}`);
  });

  it('a guest reaches no host listener on any address it can aim at', (t) => {
    if (skip !== undefined) return t.skip(skip);
    const host = results.filter((r) => r.host !== '127.0.0.1' && !slots.slotIps.includes(r.host));
    assert.ok(host.length > 0);
    const reached = host.filter((r) => r.outcome === 'ok');
    assert.deepEqual(reached, [], 'listeners a guest reached');
    // TCP to the host must be the rules' reset, not a silent drop broken routing would
    // also give (on the addresses that cannot vanish while the probes run).
    const tcp = host.filter((r) => r.proto === 'tcp' && stableHosts.has(r.host));
    assert.ok(tcp.length > 0);
    assert.deepEqual(
      tcp.filter((r) => r.outcome !== 'refused'),
      [],
      'TCP to the host answered by a reset',
    );
  });

  it('a guest reaches no other guest (envd and an open port), nor any slot address', (t) => {
    if (skip !== undefined) return t.skip(skip);
    const toSlots = results.filter((r) => slots.slotIps.includes(r.host));
    assert.ok(toSlots.some((r) => r.host === bSlotIp && r.port === ENVD_PORT));
    assert.ok(toSlots.some((r) => r.host === bSlotIp && r.port === GUEST_PORT));
    assert.deepEqual(
      toSlots.filter((r) => r.outcome === 'ok'),
      [],
      'slot addresses a guest reached',
    );
  });
});
